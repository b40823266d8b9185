// SPDX-License-Identifier: BSL-1.0
// vk-submit-probe: how fast can a CPU thread put 8 bytes into DEVICE_LOCAL memory that it cannot
// map, and know that they have landed?
//
// Why: the library's 8-byte host put into a same-GPU peer's device heap (memory the CPU cannot
// map) costs a queue submission: stage the bytes in host memory, record a vkCmdCopyBuffer, submit
// it, wait for its fence; 17-24 us on an NVIDIA H200. This program times that path and the ways
// around it, with raw Vulkan only (no libvkshmem), on one device:
//   record                what the library does: stage, record a copy, submit with a fence, poll it
//   prerecorded-dispatch  a command buffer recorded once, whose one-invocation dispatch reads
//                         {value, offset} from a mailbox and stores the value; per put: write the
//                         mailbox, submit, poll the fence
//   timeline              the same batch submitted ahead, waiting on a timeline semaphore
//                         (wait-before-signal); per put: write the mailbox, vkSignalSemaphore,
//                         spin on the semaphore until the batch signals it. Submitting the batch
//                         for the next put is timed apart (resubmit); cycle = put + resubmit
//   persistent            one invocation that stays resident and polls the mailbox; per put: write
//                         the mailbox, then spin on the acknowledgement the shader writes to host
//                         memory after its store (no Vulkan call). The shader's loop is bounded
//                         (PROBE_AGENT_POLLS): the host dispatches it again whenever it has left
//   empty-submit          a submission of no command buffers with a fence: the floor of a
//                         submission round trip, for reference
// Each put writes a fresh value at a varying 8-byte offset; afterwards the device buffer is read
// back and every offset must hold the last value written there (PASS/FAIL).
//
//   vk-submit-probe [--csv]     --csv: method,min_us,median_us,p90_us on stdout (timeline adds the
//                               rows timeline-resubmit and timeline-cycle), the rest on stderr
//   PROBE_DEVICE=<index>        physical device (default 0)
//   PROBE_ITERS=<n>             puts per method (default 2000; the first 100 are warm-up, or
//                               half of them when n < 200)
//   PROBE_AGENT_POLLS=<n>       polls of one persistent dispatch before it leaves (default 2^30; on
//                               CPU devices at most 60000: lavapipe ends any loop after 65,535 iterations)
//   PROBE_MAILBOX=bar|host      where the shaders' mailbox lives. bar (default): a DEVICE_LOCAL|
//                               HOST_VISIBLE|HOST_COHERENT type where the device has one, because a
//                               running NVIDIA shader sees a host write to host memory only once the
//                               line leaves its cache (about 13 ms; docs/architecture.md). host: the
//                               HOST_VISIBLE|HOST_COHERENT type of the staging buffer
// Exit status 0 when every method that ran passed; 1 on a failed check, a timeout or a Vulkan error.
#include <vulkan/vulkan.h>

#include "probe_agent_comp_spv.h"
#include "probe_put_comp_spv.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

constexpr VkDeviceSize kBufBytes = 64 * 1024; // dev and host
constexpr VkDeviceSize kSpan = 4096;          // puts land in dev[0, kSpan)
constexpr VkDeviceSize kMboxBytes = 4096;
constexpr VkDeviceSize kStatusOff = 0;        // host: the agent's {ack, alive, exits}
constexpr VkDeviceSize kStagingOff = 1024;    // host: record's staging word
constexpr VkDeviceSize kPutMailOff = 0;       // mailbox: {value, offset}
constexpr VkDeviceSize kAgentMailOff = 256;   // mailbox: {seq, value, offset, stop}
constexpr std::uint32_t kFencePolls = 2000;   // vkGetFenceStatus calls before vkWaitForFences
constexpr std::uint64_t kFenceTimeoutNs = 2'000'000'000;
constexpr double kSpinTimeoutUs = 1e6;        // a spin on the semaphore or on ack gives up after 1 s
constexpr std::uint32_t kWarmup = 100;

[[noreturn]] void quit(int status) {
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(status); // no exit handlers: the device may still be running a shader
}

[[noreturn]] void vk_fail(const char* call, VkResult r) {
    std::fprintf(stderr, "vk-submit-probe: %s: %d\n", call, static_cast<int>(r));
    quit(1);
}

void vk_check(const char* call, VkResult r) {
    if (r != VK_SUCCESS) vk_fail(call, r);
}

#define VK(fn, ...) vk_check(#fn, fn(__VA_ARGS__))

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "vk-submit-probe: %s\n", what.c_str());
    quit(1);
}

// A spin that gave up; the method fails and the program stops (the device state is unknown).
struct Timeout {
    std::string method, what;
};

std::uint64_t env_u64(const char* name, std::uint64_t def, std::uint64_t lo, std::uint64_t hi) {
    const char* s = std::getenv(name);
    if (!s || !*s) return def;
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s, &end, 0);
    if (errno || *end || s[0] == '-' || v < lo || v > hi)
        fail(std::string(name) + "=" + s + ": expected an integer from " + std::to_string(lo) + " to " +
             std::to_string(hi));
    return v;
}

double us_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
}

std::uint64_t mix64(std::uint64_t x) { // splitmix64
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// Mapped words, accessed as atomics so that no access is merged, hoisted or torn.
std::uint64_t& word_at(void* base, VkDeviceSize off) {
    return *reinterpret_cast<std::uint64_t*>(static_cast<char*>(base) + off);
}
void store64(void* base, VkDeviceSize off, std::uint64_t v, std::memory_order o = std::memory_order_relaxed) {
    std::atomic_ref<std::uint64_t>(word_at(base, off)).store(v, o);
}
std::uint64_t load64(void* base, VkDeviceSize off, std::memory_order o = std::memory_order_relaxed) {
    return std::atomic_ref<std::uint64_t>(word_at(base, off)).load(o);
}
// A full fence: orders the stores before it ahead of those after it also where the mapping is
// write-combined (x86: mfence), and pushes them out of the write-combining buffers.
void full_fence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

struct Stats {
    double min = 0, median = 0, p90 = 0, mean = 0;
};

Stats summarize(std::vector<double> v) {
    Stats s;
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    s.min = v.front();
    s.median = v[v.size() / 2];
    s.p90 = v[(v.size() - 1) * 9 / 10];
    double sum = 0;
    for (double x : v) sum += x;
    s.mean = sum / static_cast<double>(v.size());
    return s;
}

std::string flag_names(VkMemoryPropertyFlags f) {
    static const struct {
        VkMemoryPropertyFlags bit;
        const char* name;
    } names[] = {{VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, "DEVICE_LOCAL"},
                 {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "HOST_VISIBLE"},
                 {VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, "HOST_COHERENT"},
                 {VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "HOST_CACHED"},
                 {VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT, "LAZILY_ALLOCATED"},
                 {VK_MEMORY_PROPERTY_PROTECTED_BIT, "PROTECTED"}};
    std::string s;
    for (const auto& n : names)
        if (f & n.bit) s += (s.empty() ? "" : "|") + std::string(n.name);
    return s.empty() ? "none" : s;
}

std::string queue_flag_names(VkQueueFlags f) {
    std::string s;
    if (f & VK_QUEUE_GRAPHICS_BIT) s += "GRAPHICS|";
    if (f & VK_QUEUE_COMPUTE_BIT) s += "COMPUTE|";
    if (f & VK_QUEUE_TRANSFER_BIT) s += "TRANSFER|";
    if (!s.empty()) s.pop_back();
    return s;
}

struct Pref {
    VkMemoryPropertyFlags want, avoid;
};

struct Buffer {
    VkBuffer buf = VK_NULL_HANDLE;
    VkDeviceMemory mem = VK_NULL_HANDLE;
    void* map = nullptr;
    VkDeviceAddress addr = 0;
    std::uint32_t type = 0;
    bool fallback = false; // not the first preference
};

struct Lane {
    std::uint32_t family = 0, index = 0;
    VkQueue queue = VK_NULL_HANDLE;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer util = VK_NULL_HANDLE; // clears and read-backs
    VkFence fence = VK_NULL_HANDLE;
};

struct Row {
    std::string name;
    bool timed = false;
    Stats s;
    std::string extra;
    std::string check; // PASS, FAIL, n/a, skipped: why
};

struct AgentPush {
    std::uint64_t mailbox, status, dev;
    std::uint32_t max_polls, pad;
};

struct PutPush {
    std::uint64_t mailbox, dev;
};

class Probe {
public:
    bool csv = false;
    FILE* info = stdout;
    std::uint32_t iters = 2000, warmup = kWarmup;
    std::vector<Row> rows;

    void setup();
    void run_all();
    void print_table() const;
    void add_timeout(const Timeout& t) { rows.push_back(Row{t.method, false, {}, "timeout", "FAIL"}); }
    void teardown();
    bool any_fail() const {
        return std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.check == "FAIL"; });
    }

private:
    VkInstance inst_ = VK_NULL_HANDLE;
    VkPhysicalDevice pd_ = VK_NULL_HANDLE;
    VkDevice dev_ = VK_NULL_HANDLE;
    VkPhysicalDeviceMemoryProperties mp_{};
    bool cpu_device_ = false;
    bool has_bda_ = false, has_timeline_ = false, has_int64_ = false;
    bool shaders_ = false; // bufferDeviceAddress and shaderInt64: methods 2-4
    Lane main_, second_;
    Lane* agent_lane_ = &main_;
    Buffer devbuf_, host_, mbox_, readback_;
    VkPipelineLayout put_layout_ = VK_NULL_HANDLE, agent_layout_ = VK_NULL_HANDLE;
    VkPipeline put_pipe_ = VK_NULL_HANDLE, agent_pipe_ = VK_NULL_HANDLE;
    VkShaderModule put_mod_ = VK_NULL_HANDLE, agent_mod_ = VK_NULL_HANDLE;
    VkCommandBuffer cb_record_ = VK_NULL_HANDLE, cb_put_ = VK_NULL_HANDLE, cb_agent_ = VK_NULL_HANDLE;
    VkSemaphore timeline_ = VK_NULL_HANDLE;
    std::uint32_t agent_polls_ = 0;
    std::uint64_t seed_ = 0;

    void init_lane(Lane& l);
    Buffer make_buffer(VkDeviceSize size, VkBufferUsageFlags usage, std::initializer_list<Pref> prefs,
                       bool map, const char* what);
    void free_buffer(Buffer& b);
    void make_pipeline(const std::uint32_t* code, std::size_t bytes, std::uint32_t push_bytes,
                       VkShaderModule& mod, VkPipelineLayout& layout, VkPipeline& pipe);
    void print_type(const char* role, const Buffer& b) const;

    void submit(const Lane& l, VkCommandBuffer cb) const;
    void wait_fence(const Lane& l) const; // polls, then waits, then resets the fence
    void begin(VkCommandBuffer cb, VkCommandBufferUsageFlags flags) const;
    void clear_dev(const Lane& l) const;
    std::string verify(const Lane& l, const std::vector<std::uint64_t>& expected) const;

    std::uint64_t value_for(std::uint32_t method, std::uint32_t i) const {
        const std::uint64_t v = mix64(seed_ ^ (std::uint64_t(method) << 40) ^ i);
        return v ? v : 1;
    }
    static VkDeviceSize offset_for(std::uint32_t i) { return (VkDeviceSize(i) * 8) % kSpan; }

    Row method_record();
    Row method_prerecorded();
    Row method_timeline();
    Row method_persistent();
    Row method_empty_submit();
    // What a method's puts left: their times, and the value each offset must hold.
    struct Puts {
        std::vector<double> times;
        std::vector<std::uint64_t> expected;
    };
    // The loop every put method times (the caller cleared the buffer, clear_dev): `put(i, v, off)`
    // puts v at offset off and returns once it has landed (timed); `after(i, t0, t1)` runs untimed
    // after it.
    template <class Put, class After> Puts timed_puts(std::uint32_t method, Put&& put, After&& after);
    template <class Put> Puts timed_puts(std::uint32_t method, Put&& put) {
        auto nothing = [](std::uint32_t, Clock::time_point, Clock::time_point) {};
        return timed_puts(method, std::forward<Put>(put), nothing);
    }
    // The row of a method: its times, and the buffer checked through l.
    Row finish(const char* name, const Puts& puts, const Lane& l);
};

void Probe::setup() {
    // The environment first, so that a bad value is reported before anything else.
    const std::uint64_t index = env_u64("PROBE_DEVICE", 0, 0, 1u << 16);
    iters = static_cast<std::uint32_t>(env_u64("PROBE_ITERS", 2000, 1, 100'000'000));
    warmup = iters >= 2 * kWarmup ? kWarmup : iters / 2;
    const std::uint64_t polls_env = env_u64("PROBE_AGENT_POLLS", 0, 1, 0xffffffffu); // 0: unset
    const char* where = std::getenv("PROBE_MAILBOX");
    const std::string mailbox_where = where && *where ? where : "bar";
    if (mailbox_where != "bar" && mailbox_where != "host")
        fail("PROBE_MAILBOX=" + mailbox_where + ": expected bar or host");

    std::uint32_t loader = 0;
    VK(vkEnumerateInstanceVersion, &loader);
    if (loader < VK_API_VERSION_1_2)
        fail("the Vulkan loader offers " + std::to_string(VK_API_VERSION_MAJOR(loader)) + "." +
             std::to_string(VK_API_VERSION_MINOR(loader)) + "; this needs 1.2");
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "vk-submit-probe";
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    VK(vkCreateInstance, &ici, nullptr, &inst_);

    std::uint32_t count = 0;
    VK(vkEnumeratePhysicalDevices, inst_, &count, nullptr);
    std::vector<VkPhysicalDevice> pds(count);
    VK(vkEnumeratePhysicalDevices, inst_, &count, pds.data());
    pds.resize(count);
    if (pds.empty()) fail("no Vulkan physical device");
    if (index >= pds.size())
        fail("PROBE_DEVICE=" + std::to_string(index) + ": the devices are 0 to " + std::to_string(pds.size() - 1));
    pd_ = pds[index];

    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd_, &props);
    const bool api12 = props.apiVersion >= VK_API_VERSION_1_2;
    cpu_device_ = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    if (api12) {
        VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
        p2.pNext = &drv;
        vkGetPhysicalDeviceProperties2(pd_, &p2);
    }
    const std::uint32_t dv = props.driverVersion;
    char version[64];
    if (props.vendorID == 0x10de) // NVIDIA: 10.8.8.6 bits
        std::snprintf(version, sizeof version, "%u.%u.%u.%u", dv >> 22, (dv >> 14) & 0xff, (dv >> 6) & 0xff,
                      dv & 0x3f);
    else
        std::snprintf(version, sizeof version, "%u.%u.%u", VK_API_VERSION_MAJOR(dv), VK_API_VERSION_MINOR(dv),
                      VK_API_VERSION_PATCH(dv));
    std::fprintf(info, "vk-submit-probe: device %u of %zu: %s (%s)\n", static_cast<unsigned>(index), pds.size(),
                 props.deviceName, cpu_device_ ? "CPU" : "not a CPU");
    std::fprintf(info, "  driver: %s %s, driverVersion %s (0x%x), Vulkan %u.%u.%u\n",
                 api12 ? drv.driverName : "?", api12 ? drv.driverInfo : "", version, dv,
                 VK_API_VERSION_MAJOR(props.apiVersion), VK_API_VERSION_MINOR(props.apiVersion),
                 VK_API_VERSION_PATCH(props.apiVersion));

    // Features.
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    if (api12) f2.pNext = &f12;
    vkGetPhysicalDeviceFeatures2(pd_, &f2);
    has_bda_ = api12 && f12.bufferDeviceAddress;
    has_timeline_ = api12 && f12.timelineSemaphore;
    has_int64_ = f2.features.shaderInt64;
    shaders_ = has_bda_ && has_int64_;
    std::fprintf(info, "  features: timelineSemaphore %s, bufferDeviceAddress %s, shaderInt64 %s\n",
                 has_timeline_ ? "yes" : "no", has_bda_ ? "yes" : "no", has_int64_ ? "yes" : "no");

    // Queues: the first compute family; the persistent shader gets a second queue where there is one.
    std::uint32_t nfam = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd_, &nfam, nullptr);
    std::vector<VkQueueFamilyProperties> fams(nfam);
    vkGetPhysicalDeviceQueueFamilyProperties(pd_, &nfam, fams.data());
    fams.resize(nfam);
    int fa = -1;
    for (std::uint32_t i = 0; i < nfam && fa < 0; ++i)
        if ((fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && fams[i].queueCount > 0) fa = static_cast<int>(i);
    if (fa < 0) fail("the device has no compute queue family");
    main_.family = static_cast<std::uint32_t>(fa);
    main_.index = 0;
    bool have_second = true;
    if (fams[main_.family].queueCount >= 2) {
        second_.family = main_.family;
        second_.index = 1;
    } else {
        have_second = false;
        for (std::uint32_t i = 0; i < nfam && !have_second; ++i)
            if (i != main_.family && (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && fams[i].queueCount > 0) {
                second_.family = i;
                second_.index = 0;
                have_second = true;
            }
    }
    const float priorities[2] = {1.0f, 1.0f};
    VkDeviceQueueCreateInfo qci[2] = {{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO},
                                      {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO}};
    std::uint32_t nq = 1;
    qci[0].queueFamilyIndex = main_.family;
    qci[0].queueCount = 1;
    qci[0].pQueuePriorities = priorities;
    if (have_second && second_.family == main_.family) {
        qci[0].queueCount = 2;
    } else if (have_second) {
        qci[1].queueFamilyIndex = second_.family;
        qci[1].queueCount = 1;
        qci[1].pQueuePriorities = priorities;
        nq = 2;
    }
    VkPhysicalDeviceVulkan12Features e12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    e12.timelineSemaphore = has_timeline_;
    e12.bufferDeviceAddress = has_bda_;
    VkPhysicalDeviceFeatures2 e2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    e2.features.shaderInt64 = has_int64_;
    if (api12) e2.pNext = &e12;
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &e2;
    dci.queueCreateInfoCount = nq;
    dci.pQueueCreateInfos = qci;
    VK(vkCreateDevice, pd_, &dci, nullptr, &dev_);
    init_lane(main_);
    if (have_second) {
        init_lane(second_);
        agent_lane_ = &second_;
    }
    std::fprintf(info, "  queues: family %u (%s) queue %u", main_.family,
                 queue_flag_names(fams[main_.family].queueFlags).c_str(), main_.index);
    if (have_second)
        std::fprintf(info, "; persistent: family %u (%s) queue %u\n", second_.family,
                     queue_flag_names(fams[second_.family].queueFlags).c_str(), second_.index);
    else
        std::fprintf(info, "; persistent: the same queue (there is no second compute queue; nothing else is "
                           "submitted while it runs)\n");

    // Memory.
    vkGetPhysicalDeviceMemoryProperties(pd_, &mp_);
    constexpr VkMemoryPropertyFlags DL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    constexpr VkMemoryPropertyFlags HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    constexpr VkMemoryPropertyFlags HC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    constexpr VkMemoryPropertyFlags HCACHED = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    const VkBufferUsageFlags bda = has_bda_ ? VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT : 0;
    const VkBufferUsageFlags xfer = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    devbuf_ = make_buffer(kBufBytes, xfer | bda, {{DL, HV}, {DL, 0}}, false, "dev");
    const std::initializer_list<Pref> host_prefs = {{HV | HC | HCACHED, DL}, {HV | HC, DL}, {HV | HC, 0}};
    host_ = make_buffer(kBufBytes, xfer | bda, host_prefs, true, "host");
    readback_ = make_buffer(kSpan, VK_BUFFER_USAGE_TRANSFER_DST_BIT, host_prefs, true, "readback");
    std::string mailbox_note;
    if (shaders_) {
        if (mailbox_where == "bar") {
            mbox_ = make_buffer(kMboxBytes, bda,
                                {{DL | HV | HC, 0}, {HV | HC | HCACHED, DL}, {HV | HC, DL}, {HV | HC, 0}}, true,
                                "mailbox");
            if (mbox_.fallback) mailbox_note = " (no DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT type: host memory)";
        } else {
            mbox_ = make_buffer(kMboxBytes, bda, host_prefs, true, "mailbox");
            mailbox_note = " (PROBE_MAILBOX=host)";
        }
        std::memset(mbox_.map, 0, kMboxBytes);
    }
    std::memset(host_.map, 0, kBufBytes);
    std::fprintf(info, "  memory types:");
    for (std::uint32_t i = 0; i < mp_.memoryTypeCount; ++i)
        std::fprintf(info, "%s %u %s (heap %u)", i ? ";" : "", i, flag_names(mp_.memoryTypes[i].propertyFlags).c_str(),
                     mp_.memoryTypes[i].heapIndex);
    std::fprintf(info, "\n");
    print_type("dev", devbuf_);
    if (mp_.memoryTypes[devbuf_.type].propertyFlags & HV)
        std::fprintf(info, "    note: no DEVICE_LOCAL type without HOST_VISIBLE here: dev uses one the CPU could map "
                           "(it is not mapped)\n");
    print_type("host", host_);
    if (shaders_) {
        print_type("mailbox", mbox_);
        if (!mailbox_note.empty()) std::fprintf(info, "    note:%s\n", mailbox_note.c_str());
    }
    print_type("readback", readback_);

    // Pipelines, command buffers, the timeline semaphore.
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = main_.pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    VK(vkAllocateCommandBuffers, dev_, &cai, &cb_record_);
    if (shaders_) {
        make_pipeline(probe_put_comp_spv, sizeof probe_put_comp_spv, sizeof(PutPush), put_mod_, put_layout_,
                      put_pipe_);
        make_pipeline(probe_agent_comp_spv, sizeof probe_agent_comp_spv, sizeof(AgentPush), agent_mod_,
                      agent_layout_, agent_pipe_);
        VK(vkAllocateCommandBuffers, dev_, &cai, &cb_put_);
        cai.commandPool = agent_lane_->pool;
        VK(vkAllocateCommandBuffers, dev_, &cai, &cb_agent_);
    }
    if (has_timeline_) {
        VkSemaphoreTypeCreateInfo sti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
        sti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
        sti.initialValue = 0;
        VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        sci.pNext = &sti;
        VK(vkCreateSemaphore, dev_, &sci, nullptr, &timeline_);
    }

    // lavapipe ends a loop silently after 65,535 iterations; past that its persistent dispatches serve
    // about one put each (measured), so CPU devices keep below it.
    constexpr std::uint32_t kCpuPolls = 60000;
    agent_polls_ = polls_env ? static_cast<std::uint32_t>(polls_env) : cpu_device_ ? kCpuPolls : (1u << 30);
    const bool clamped = cpu_device_ && agent_polls_ > kCpuPolls;
    if (clamped) agent_polls_ = kCpuPolls;
    std::fprintf(info, "  %u puts per method (%u warm-up), persistent polls per dispatch %u\n", iters, warmup,
                 agent_polls_);
    if (clamped)
        std::fprintf(info, "    note: PROBE_AGENT_POLLS=%llu lowered to %u on a CPU device (lavapipe ends a loop after "
                           "65,535 iterations)\n",
                     static_cast<unsigned long long>(polls_env), kCpuPolls);
    std::random_device rd;
    seed_ = (std::uint64_t(rd()) << 32) ^ rd() ^
            static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
}

void Probe::init_lane(Lane& l) {
    vkGetDeviceQueue(dev_, l.family, l.index, &l.queue);
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = l.family;
    VK(vkCreateCommandPool, dev_, &pci, nullptr, &l.pool);
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = l.pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    VK(vkAllocateCommandBuffers, dev_, &cai, &l.util);
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VK(vkCreateFence, dev_, &fci, nullptr, &l.fence);
}

Buffer Probe::make_buffer(VkDeviceSize size, VkBufferUsageFlags usage, std::initializer_list<Pref> prefs, bool map,
                          const char* what) {
    Buffer b;
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = size;
    bci.usage = usage;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VK(vkCreateBuffer, dev_, &bci, nullptr, &b.buf);
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev_, b.buf, &req);
    int type = -1;
    bool first = true;
    for (const Pref& p : prefs) {
        for (std::uint32_t i = 0; i < mp_.memoryTypeCount && type < 0; ++i) {
            const VkMemoryPropertyFlags f = mp_.memoryTypes[i].propertyFlags;
            if ((req.memoryTypeBits & (1u << i)) && (f & p.want) == p.want && !(f & p.avoid))
                type = static_cast<int>(i);
        }
        if (type >= 0) break;
        first = false;
    }
    if (type < 0) fail(std::string("no memory type for the ") + what + " buffer");
    b.type = static_cast<std::uint32_t>(type);
    b.fallback = !first;
    VkMemoryAllocateFlagsInfo afi{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    afi.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    if (usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT) ai.pNext = &afi;
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = b.type;
    VK(vkAllocateMemory, dev_, &ai, nullptr, &b.mem);
    VK(vkBindBufferMemory, dev_, b.buf, b.mem, 0);
    if (map) VK(vkMapMemory, dev_, b.mem, 0, VK_WHOLE_SIZE, 0, &b.map);
    if (usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT) {
        VkBufferDeviceAddressInfo bai{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
        bai.buffer = b.buf;
        b.addr = vkGetBufferDeviceAddress(dev_, &bai);
        if (b.addr == 0) fail(std::string("vkGetBufferDeviceAddress returned 0 for the ") + what + " buffer");
    }
    return b;
}

void Probe::free_buffer(Buffer& b) {
    if (b.map) vkUnmapMemory(dev_, b.mem);
    if (b.buf) vkDestroyBuffer(dev_, b.buf, nullptr);
    if (b.mem) vkFreeMemory(dev_, b.mem, nullptr);
    b = Buffer{};
}

void Probe::print_type(const char* role, const Buffer& b) const {
    std::fprintf(info, "  memory %-8s type %u (%s), heap %u\n", role, b.type,
                 flag_names(mp_.memoryTypes[b.type].propertyFlags).c_str(), mp_.memoryTypes[b.type].heapIndex);
}

void Probe::make_pipeline(const std::uint32_t* code, std::size_t bytes, std::uint32_t push_bytes,
                          VkShaderModule& mod, VkPipelineLayout& layout, VkPipeline& pipe) {
    VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smi.codeSize = bytes;
    smi.pCode = code;
    VK(vkCreateShaderModule, dev_, &smi, nullptr, &mod);
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pli.pushConstantRangeCount = 1;
    pli.pPushConstantRanges = &range;
    VK(vkCreatePipelineLayout, dev_, &pli, nullptr, &layout);
    VkComputePipelineCreateInfo cpi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cpi.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpi.stage.module = mod;
    cpi.stage.pName = "main";
    cpi.layout = layout;
    VK(vkCreateComputePipelines, dev_, VK_NULL_HANDLE, 1, &cpi, nullptr, &pipe);
}

void Probe::submit(const Lane& l, VkCommandBuffer cb) const {
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = cb ? 1 : 0;
    si.pCommandBuffers = cb ? &cb : nullptr;
    VK(vkQueueSubmit, l.queue, 1, &si, l.fence);
}

void Probe::wait_fence(const Lane& l) const {
    bool done = false;
    for (std::uint32_t i = 0; i < kFencePolls && !done; ++i) {
        const VkResult r = vkGetFenceStatus(dev_, l.fence);
        if (r == VK_SUCCESS)
            done = true;
        else if (r != VK_NOT_READY)
            vk_fail("vkGetFenceStatus", r);
    }
    if (!done) VK(vkWaitForFences, dev_, 1, &l.fence, VK_TRUE, kFenceTimeoutNs); // VK_TIMEOUT fails too
    VK(vkResetFences, dev_, 1, &l.fence);
}

void Probe::begin(VkCommandBuffer cb, VkCommandBufferUsageFlags flags) const {
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = flags;
    VK(vkBeginCommandBuffer, cb, &bi);
}

void barrier(VkCommandBuffer cb, VkPipelineStageFlags src_stage, VkAccessFlags src, VkPipelineStageFlags dst_stage,
             VkAccessFlags dst) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = src;
    mb.dstAccessMask = dst;
    vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

// Zeroes dev[0, kSpan) on lane l, ahead of a method's puts on the same queue.
void Probe::clear_dev(const Lane& l) const {
    begin(l.util, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    barrier(l.util, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    vkCmdFillBuffer(l.util, devbuf_.buf, 0, kSpan, 0);
    barrier(l.util, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    VK(vkEndCommandBuffer, l.util);
    submit(l, l.util);
    wait_fence(l);
}

// Copies dev[0, kSpan) back on lane l (the queue the method's puts ran on) and compares it with
// what was put last at each offset. Empty when it matches, else what differs.
std::string Probe::verify(const Lane& l, const std::vector<std::uint64_t>& expected) const {
    begin(l.util, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    barrier(l.util, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT);
    const VkBufferCopy region{0, 0, kSpan};
    vkCmdCopyBuffer(l.util, devbuf_.buf, readback_.buf, 1, &region);
    barrier(l.util, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
    VK(vkEndCommandBuffer, l.util);
    submit(l, l.util);
    wait_fence(l);
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < expected.size(); ++i)
        if (load64(readback_.map, i * 8) != expected[i] && bad++ == 0) first = i;
    if (!bad) return {};
    char msg[160];
    std::snprintf(msg, sizeof msg, "%zu of %zu words differ; first at offset %zu: 0x%016llx, expected 0x%016llx", bad,
                  expected.size(), first * 8, static_cast<unsigned long long>(load64(readback_.map, first * 8)),
                  static_cast<unsigned long long>(expected[first]));
    return msg;
}

template <class Put, class After>
Probe::Puts Probe::timed_puts(std::uint32_t method, Put&& put, After&& after) {
    Puts p{{}, std::vector<std::uint64_t>(kSpan / 8, 0)};
    p.times.reserve(iters);
    for (std::uint32_t i = 0; i < iters; ++i) {
        const std::uint64_t v = value_for(method, i);
        const VkDeviceSize off = offset_for(i);
        const auto t0 = Clock::now();
        put(i, v, off);
        const auto t1 = Clock::now();
        p.expected[off / 8] = v;
        if (i >= warmup) p.times.push_back(us_between(t0, t1));
        after(i, t0, t1);
    }
    return p;
}

Row Probe::finish(const char* name, const Puts& puts, const Lane& l) {
    Row r;
    r.name = name;
    r.timed = true;
    r.s = summarize(puts.times);
    const std::string diff = verify(l, puts.expected);
    r.check = diff.empty() ? "PASS" : "FAIL";
    if (!diff.empty()) std::fprintf(stderr, "vk-submit-probe: %s: FAIL: %s\n", name, diff.c_str());
    return r;
}

// 1. What the library does today.
Row Probe::method_record() {
    clear_dev(main_);
    const Puts p = timed_puts(1, [&](std::uint32_t, std::uint64_t v, VkDeviceSize off) {
        std::memcpy(static_cast<char*>(host_.map) + kStagingOff, &v, sizeof v);
        begin(cb_record_, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
        const VkBufferCopy region{kStagingOff, off, sizeof v};
        vkCmdCopyBuffer(cb_record_, host_.buf, devbuf_.buf, 1, &region);
        barrier(cb_record_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                VK_ACCESS_HOST_READ_BIT);
        VK(vkEndCommandBuffer, cb_record_);
        submit(main_, cb_record_);
        wait_fence(main_);
        VK(vkResetCommandBuffer, cb_record_, 0);
    });
    return finish("record", p, main_);
}

// 2. A command buffer recorded once; the mailbox carries the put.
Row Probe::method_prerecorded() {
    begin(cb_put_, 0);
    vkCmdBindPipeline(cb_put_, VK_PIPELINE_BIND_POINT_COMPUTE, put_pipe_);
    const PutPush push{mbox_.addr + kPutMailOff, devbuf_.addr};
    vkCmdPushConstants(cb_put_, put_layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
    vkCmdDispatch(cb_put_, 1, 1, 1);
    barrier(cb_put_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
    VK(vkEndCommandBuffer, cb_put_);

    clear_dev(main_);
    const Puts p = timed_puts(2, [&](std::uint32_t, std::uint64_t v, VkDeviceSize off) {
        store64(mbox_.map, kPutMailOff, v);
        store64(mbox_.map, kPutMailOff + 8, off);
        full_fence();
        submit(main_, cb_put_);
        wait_fence(main_);
    });
    return finish("prerecorded-dispatch", p, main_);
}

// 3. The batch of put k waits for S >= 2k+1 and signals S = 2k+2; it is submitted before put k.
Row Probe::method_timeline() {
    std::uint64_t wait_value = 0, signal_value = 0;
    const VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    VkTimelineSemaphoreSubmitInfo tsi{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    tsi.waitSemaphoreValueCount = 1;
    tsi.pWaitSemaphoreValues = &wait_value;
    tsi.signalSemaphoreValueCount = 1;
    tsi.pSignalSemaphoreValues = &signal_value;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.pNext = &tsi;
    si.waitSemaphoreCount = 1;
    si.pWaitSemaphores = &timeline_;
    si.pWaitDstStageMask = &wait_stage;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb_put_;
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &timeline_;
    std::uint64_t base = 0; // S's value now: the semaphore is not reset between runs
    VK(vkGetSemaphoreCounterValue, dev_, timeline_, &base);
    auto submit_for = [&](std::uint32_t k) {
        wait_value = base + 2ull * k + 1;
        signal_value = base + 2ull * k + 2;
        VK(vkQueueSubmit, main_.queue, 1, &si, VK_NULL_HANDLE);
    };

    clear_dev(main_);
    std::vector<double> resubmits, cycles;
    submit_for(0);
    auto put = [&](std::uint32_t k, std::uint64_t v, VkDeviceSize off) {
        const std::uint64_t go = base + 2ull * k + 1, done = base + 2ull * k + 2;
        const auto t0 = Clock::now();
        store64(mbox_.map, kPutMailOff, v);
        store64(mbox_.map, kPutMailOff + 8, off);
        full_fence();
        VkSemaphoreSignalInfo ssi{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
        ssi.semaphore = timeline_;
        ssi.value = go;
        VK(vkSignalSemaphore, dev_, &ssi);
        std::uint64_t value = 0;
        for (std::uint32_t spins = 0;; ++spins) {
            VK(vkGetSemaphoreCounterValue, dev_, timeline_, &value);
            if (value >= done) break;
            if ((spins & 255) == 255 && us_between(t0, Clock::now()) > kSpinTimeoutUs)
                throw Timeout{"timeline", "timeline: the semaphore stayed at " + std::to_string(value) +
                                              " for 1 s after " + std::to_string(go) + " was signalled (expected " +
                                              std::to_string(done) + ")"};
        }
    };
    // The batch for the next put, untimed.
    auto resubmit = [&](std::uint32_t k, Clock::time_point t0, Clock::time_point t1) {
        if (k + 1 == iters) return;
        submit_for(k + 1);
        const auto t2 = Clock::now();
        if (k >= warmup) {
            resubmits.push_back(us_between(t1, t2));
            cycles.push_back(us_between(t0, t2));
        }
    };
    Row r = finish("timeline", timed_puts(3, put, resubmit), main_);
    const Stats rs = summarize(resubmits), cs = summarize(cycles);
    char extra[96];
    std::snprintf(extra, sizeof extra, "resubmit mean %.1f us, cycle median %.1f us", rs.mean, cs.median);
    r.extra = resubmits.empty() ? "no resubmission timed" : extra;
    rows.push_back(Row{"timeline-resubmit", true, rs, "", r.check});
    rows.push_back(Row{"timeline-cycle", true, cs, "", r.check});
    return r;
}

// 4. A resident shader serves the mailbox; the host spins on its acknowledgement.
Row Probe::method_persistent() {
    Lane& l = *agent_lane_;
    void* mb = static_cast<char*>(mbox_.map) + kAgentMailOff;
    void* st = static_cast<char*>(host_.map) + kStatusOff;
    std::memset(mb, 0, 32);
    std::memset(st, 0, 24);
    full_fence();

    begin(cb_agent_, 0);
    vkCmdBindPipeline(cb_agent_, VK_PIPELINE_BIND_POINT_COMPUTE, agent_pipe_);
    const AgentPush push{mbox_.addr + kAgentMailOff, host_.addr + kStatusOff, devbuf_.addr, agent_polls_, 0};
    vkCmdPushConstants(cb_agent_, agent_layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
    vkCmdDispatch(cb_agent_, 1, 1, 1);
    VK(vkEndCommandBuffer, cb_agent_);

    clear_dev(l);
    std::uint64_t dispatches = 1;
    submit(l, cb_agent_);
    // Dispatches again once the agent has left (alive == 0 and its fence has signalled).
    auto keep_alive = [&] {
        if (load64(st, 8, std::memory_order_acquire) != 0) return;
        const VkResult r = vkGetFenceStatus(dev_, l.fence);
        if (r == VK_NOT_READY) return; // not started yet, or leaving
        if (r != VK_SUCCESS) vk_fail("vkGetFenceStatus", r);
        VK(vkResetFences, dev_, 1, &l.fence);
        submit(l, cb_agent_);
        ++dispatches;
    };
    const Puts p = timed_puts(4, [&](std::uint32_t i, std::uint64_t v, VkDeviceSize off) {
        const std::uint64_t seq = i + 1ull;
        const auto t0 = Clock::now();
        store64(mb, 8, v);
        store64(mb, 16, off);
        full_fence(); // value and offset before seq, also where the mapping is write-combined
        store64(mb, 0, seq, std::memory_order_release);
        full_fence(); // out of the write-combining buffers now
        for (std::uint32_t spins = 0; load64(st, 0, std::memory_order_acquire) != seq; ++spins) {
            keep_alive();
            if ((spins & 255) == 255 && us_between(t0, Clock::now()) > kSpinTimeoutUs)
                throw Timeout{"persistent", "persistent: no acknowledgement of put " + std::to_string(seq) +
                                                " within 1 s (ack " + std::to_string(load64(st, 0)) + ", alive " +
                                                std::to_string(load64(st, 8)) + ", dispatches " +
                                                std::to_string(dispatches) + ")"};
        }
    });
    // Stop: stop, then a new seq that makes the agent look.
    store64(mb, 24, 1);
    full_fence();
    store64(mb, 0, iters + 1ull, std::memory_order_release);
    full_fence();
    VK(vkWaitForFences, dev_, 1, &l.fence, VK_TRUE, kFenceTimeoutNs);
    VK(vkResetFences, dev_, 1, &l.fence);
    const std::uint64_t exits = load64(st, 16), alive = load64(st, 8);
    Row r = finish("persistent", p, l);
    if (exits != dispatches || alive != 0) {
        std::fprintf(stderr, "vk-submit-probe: persistent: FAIL: %llu dispatches, %llu left, alive %llu\n",
                     static_cast<unsigned long long>(dispatches), static_cast<unsigned long long>(exits),
                     static_cast<unsigned long long>(alive));
        r.check = "FAIL";
    }
    r.extra = "dispatches " + std::to_string(dispatches);
    return r;
}

// 5. The floor: a submission of nothing, with a fence.
Row Probe::method_empty_submit() {
    std::vector<double> times;
    times.reserve(iters);
    for (std::uint32_t i = 0; i < iters; ++i) {
        const auto t0 = Clock::now();
        submit(main_, VK_NULL_HANDLE);
        wait_fence(main_);
        const auto t1 = Clock::now();
        if (i >= warmup) times.push_back(us_between(t0, t1));
    }
    Row r;
    r.name = "empty-submit";
    r.timed = true;
    r.s = summarize(times);
    r.check = "n/a";
    return r;
}

void Probe::run_all() {
    auto skipped = [](const char* name, const char* why) {
        return Row{name, false, {}, "", std::string("skipped: ") + why};
    };
    const char* no_shaders = "needs bufferDeviceAddress and shaderInt64";
    rows.push_back(method_record());
    rows.push_back(shaders_ ? method_prerecorded() : skipped("prerecorded-dispatch", no_shaders));
    if (!shaders_)
        rows.push_back(skipped("timeline", no_shaders));
    else if (!has_timeline_)
        rows.push_back(skipped("timeline", "needs timelineSemaphore"));
    else {
        const std::size_t at = rows.size();
        Row r = method_timeline(); // appends its resubmit and cycle rows
        rows.insert(rows.begin() + static_cast<std::ptrdiff_t>(at), r);
    }
    rows.push_back(shaders_ ? method_persistent() : skipped("persistent", no_shaders));
    rows.push_back(method_empty_submit());
}

void Probe::print_table() const {
    if (csv) {
        std::printf("method,min_us,median_us,p90_us\n");
        for (const Row& r : rows)
            if (r.timed) std::printf("%s,%.3f,%.3f,%.3f\n", r.name.c_str(), r.s.min, r.s.median, r.s.p90);
        return;
    }
    std::printf("%-22s %9s %11s %9s   %-44s %s\n", "method", "min_us", "median_us", "p90_us", "extra", "check");
    for (const Row& r : rows) {
        if (r.name == "timeline-resubmit" || r.name == "timeline-cycle") continue; // in timeline's extra
        if (r.timed)
            std::printf("%-22s %9.2f %11.2f %9.2f   %-44s %s\n", r.name.c_str(), r.s.min, r.s.median, r.s.p90,
                        r.extra.c_str(), r.check.c_str());
        else
            std::printf("%-22s %9s %11s %9s   %-44s %s\n", r.name.c_str(), "-", "-", "-", r.extra.c_str(),
                        r.check.c_str());
    }
}

void Probe::teardown() {
    VK(vkDeviceWaitIdle, dev_);
    if (timeline_) vkDestroySemaphore(dev_, timeline_, nullptr);
    for (VkPipeline p : {put_pipe_, agent_pipe_})
        if (p) vkDestroyPipeline(dev_, p, nullptr);
    for (VkPipelineLayout p : {put_layout_, agent_layout_})
        if (p) vkDestroyPipelineLayout(dev_, p, nullptr);
    for (VkShaderModule m : {put_mod_, agent_mod_})
        if (m) vkDestroyShaderModule(dev_, m, nullptr);
    for (Buffer* b : {&devbuf_, &host_, &mbox_, &readback_}) free_buffer(*b);
    for (Lane* l : {&main_, &second_}) {
        if (l->fence) vkDestroyFence(dev_, l->fence, nullptr);
        if (l->pool) vkDestroyCommandPool(dev_, l->pool, nullptr); // frees its command buffers
    }
    vkDestroyDevice(dev_, nullptr);
    vkDestroyInstance(inst_, nullptr);
}

} // namespace

int main(int argc, char** argv) {
    Probe p;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--csv") == 0) {
            p.csv = true;
        } else {
            const bool help = std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0;
            std::fprintf(help ? stdout : stderr,
                         "usage: vk-submit-probe [--csv]\n"
                         "  env PROBE_DEVICE=<index> PROBE_ITERS=<n> PROBE_AGENT_POLLS=<n> PROBE_MAILBOX=bar|host\n");
            return help ? 0 : 1;
        }
    }
    if (p.csv) p.info = stderr;
    p.setup();
    try {
        p.run_all();
    } catch (const Timeout& t) {
        std::fprintf(stderr, "vk-submit-probe: %s\n", t.what.c_str());
        p.add_timeout(t);
        p.print_table();
        quit(1); // the device may still hold the batch or the shader: no teardown
    }
    p.print_table();
    const bool failed = p.any_fail();
    p.teardown();
    return failed ? 1 : 0;
}
