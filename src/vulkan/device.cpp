// SPDX-License-Identifier: BSL-1.0
#include "vulkan/device.hpp"

#include "core/log.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <unistd.h>

namespace vkshmem {
namespace {

const char* type_name(VkPhysicalDeviceType t) {
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    default: return "other";
    }
}

Result<VkInstance> make_instance() {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "vkshmem";
    app.pEngineName = "vkshmem";
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ci.pApplicationInfo = &app;
    VkInstance inst = VK_NULL_HANDLE;
    VkResult r = vkCreateInstance(&ci, nullptr, &inst);
    if (r != VK_SUCCESS)
        return make_error(fmt::format("vkCreateInstance: {} (is a Vulkan driver installed? lavapipe is in "
                                      "Debian's mesa-vulkan-drivers)",
                                      vk_result_name(r)),
                          r);
    return inst;
}

DeviceReport describe(VkPhysicalDevice pd) {
    DeviceReport d;
    VkPhysicalDeviceIDProperties idp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceExternalMemoryHostPropertiesEXT hostp{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
    idp.pNext = &drv;
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &idp;

    std::uint32_t n = 0;
    vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
    std::vector<VkExtensionProperties> exts(n);
    vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
    auto has = [&](const char* e) {
        return std::any_of(exts.begin(), exts.end(), [&](auto& x) { return std::strcmp(x.extensionName, e) == 0; });
    };
    d.ext_memory_fd = has(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
    d.ext_memory_host = has(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
    d.ext_dma_buf = has("VK_EXT_external_memory_dma_buf");
    d.ext_map_placed = has("VK_EXT_map_memory_placed");
    if (d.ext_memory_host) drv.pNext = &hostp;
    vkGetPhysicalDeviceProperties2(pd, &p2);
    const auto& p = p2.properties;
    d.name = p.deviceName;
    d.type = type_name(p.deviceType);
    d.driver = fmt::format("{} {}", drv.driverName, drv.driverInfo);
    d.driver_id = drv.driverID;
    d.api_version = p.apiVersion;
    std::memcpy(d.uuid, idp.deviceUUID, VK_UUID_SIZE);
    d.max_storage_buffer_range = p.limits.maxStorageBufferRange;
    d.host_import_alignment = d.ext_memory_host ? hostp.minImportedHostPointerAlignment : 0;

    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &f12;
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    d.buffer_device_address = f12.bufferDeviceAddress;
    d.shader_int64 = f2.features.shaderInt64;
    d.atomic_int64 = f12.shaderBufferInt64Atomics;

    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    for (std::uint32_t i = 0; i < mp.memoryTypeCount; ++i) {
        auto fl = mp.memoryTypes[i].propertyFlags;
        if ((fl & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) && (fl & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
            d.device_local_host_visible = true;
    }
    for (std::uint32_t i = 0; i < mp.memoryHeapCount; ++i)
        if (mp.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
            d.device_local_bytes = std::max<std::uint64_t>(d.device_local_bytes, mp.memoryHeaps[i].size);

    if (p.apiVersion < VK_API_VERSION_1_2) d.unusable_reason = "Vulkan 1.2 is required";
    else if (!d.ext_memory_fd) d.unusable_reason = "lacks VK_KHR_external_memory_fd";
    else if (!d.ext_memory_host) d.unusable_reason = "lacks VK_EXT_external_memory_host";
    else if (!d.buffer_device_address) d.unusable_reason = "lacks bufferDeviceAddress";
    return d;
}

} // namespace

const char* vk_result_name(VkResult r) {
    switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_INVALID_EXTERNAL_HANDLE: return "VK_ERROR_INVALID_EXTERNAL_HANDLE";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    default: return "VkResult error";
    }
}

std::vector<DeviceReport> enumerate_devices(std::string* error) {
    std::vector<DeviceReport> out;
    auto inst = make_instance();
    if (!inst) {
        if (error) *error = inst.error().message;
        return out;
    }
    std::uint32_t n = 0;
    vkEnumeratePhysicalDevices(*inst, &n, nullptr);
    std::vector<VkPhysicalDevice> pds(n);
    vkEnumeratePhysicalDevices(*inst, &n, pds.data());
    for (auto pd : pds) out.push_back(describe(pd));
    vkDestroyInstance(*inst, nullptr);
    return out;
}

Result<std::unique_ptr<VulkanDevice>> VulkanDevice::create(const std::string& selector, int local_rank) {
    auto inst = make_instance();
    if (!inst) return inst.error();
    std::unique_ptr<VulkanDevice> d(new VulkanDevice);
    d->instance_ = *inst;
    std::uint32_t n = 0;
    vkEnumeratePhysicalDevices(d->instance_, &n, nullptr);
    std::vector<VkPhysicalDevice> pds(n);
    vkEnumeratePhysicalDevices(d->instance_, &n, pds.data());
    std::vector<DeviceReport> reports;
    for (auto pd : pds) reports.push_back(describe(pd));
    std::string listing;
    for (std::size_t i = 0; i < reports.size(); ++i)
        listing += fmt::format("{}{}: {} ({}{}{})", i ? "; " : "", i, reports[i].name, reports[i].type,
                               reports[i].unusable_reason.empty() ? "" : ", unusable: ",
                               reports[i].unusable_reason);
    if (pds.empty()) return make_error("no Vulkan physical device found (install mesa-vulkan-drivers for lavapipe)");

    int pick = -1;
    if (selector.empty()) {
        std::vector<int> usable;
        for (std::size_t i = 0; i < reports.size(); ++i)
            if (reports[i].unusable_reason.empty()) usable.push_back(static_cast<int>(i));
        if (usable.empty()) return make_error(fmt::format("no usable Vulkan device: {}", listing));
        // Prefer GPUs over CPU drivers when both are present.
        std::vector<int> gpus;
        for (int i : usable)
            if (reports[i].type != "cpu") gpus.push_back(i);
        const auto& pool = gpus.empty() ? usable : gpus;
        pick = pool[static_cast<std::size_t>(local_rank) % pool.size()];
    } else if (std::all_of(selector.begin(), selector.end(), ::isdigit)) {
        pick = std::atoi(selector.c_str());
        if (pick >= static_cast<int>(pds.size()))
            return make_error(fmt::format("VKSHMEM_DEVICE={} but there are only {} devices: {}", selector,
                                          pds.size(), listing));
    } else {
        for (std::size_t i = 0; i < reports.size() && pick < 0; ++i)
            if (reports[i].name.find(selector) != std::string::npos) pick = static_cast<int>(i);
        if (pick < 0)
            return make_error(fmt::format("VKSHMEM_DEVICE={} matches no device name: {}", selector, listing));
    }
    if (!reports[pick].unusable_reason.empty())
        return make_error(fmt::format("device {} ({}) {}", pick, reports[pick].name, reports[pick].unusable_reason));

    d->index_ = pick;
    d->phys_ = pds[pick];
    d->report_ = reports[pick];
    const std::vector<VkQueueFamilyProperties> qf = d->load_properties();
    const auto nq = static_cast<std::uint32_t>(qf.size());
    int family = -1;
    for (std::uint32_t i = 0; i < nq; ++i)
        if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
            family = static_cast<int>(i);
            break;
        }
    if (family < 0) return make_error(fmt::format("device {} has no compute queue", d->report_.name));
    d->queue_family_ = static_cast<std::uint32_t>(family);

    // The application's dispatches go to a queue of that family; the
    // runtime's copies to a transfer-only family where there is one (a copy
    // engine, which runs beside a running shader: on NVIDIA a second queue
    // of the same family waits for it), else to a second queue of the
    // family; its one-invocation atomics to another compute family, else a
    // second queue. So a copy or atomic the proxy makes for a running shader
    // is not queued behind that shader.
    int transfer = -1, compute2 = -1;
    for (std::uint32_t i = 0; i < nq; ++i) {
        const auto fl = qf[i].queueFlags;
        if (transfer < 0 && (fl & VK_QUEUE_TRANSFER_BIT) && !(fl & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)))
            transfer = static_cast<int>(i);
        if (compute2 < 0 && i != d->queue_family_ && (fl & VK_QUEUE_COMPUTE_BIT)) compute2 = static_cast<int>(i);
    }
    const float prio[4] = {1.0f, 1.0f, 1.0f, 1.0f};
    std::vector<VkDeviceQueueCreateInfo> qcis;
    auto want = [&](std::uint32_t fam, std::uint32_t count) {
        VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
        q.queueFamilyIndex = fam;
        q.queueCount = std::min(count, qf[fam].queueCount);
        q.pQueuePriorities = prio;
        qcis.push_back(q);
        d->families_.push_back(fam);
        return q.queueCount;
    };
    const bool second = transfer < 0 || compute2 < 0; // a second queue of the main family is used
    const std::uint32_t main_queues = want(d->queue_family_, second ? 2 : 1);
    // Up to 4 queues of the transfer family: the proxy's copy stream spreads its batches over
    // them (each may be a copy engine of its own).
    const std::uint32_t copy_queues = transfer >= 0 ? want(static_cast<std::uint32_t>(transfer), 4) : 0;
    if (compute2 >= 0) want(static_cast<std::uint32_t>(compute2), 1);
    const char* exts[] = {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME};
    // What shaders may use, where the device offers it: 64-bit integers and
    // atomics and doubles (the typed device routines), 8/16-bit storage and
    // arithmetic (char and short routines), and descriptor arrays indexed by
    // PE (the HLSL library's heap descriptors).
    VkPhysicalDeviceVulkan11Features have11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceVulkan12Features have12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    have12.pNext = &have11;
    VkPhysicalDeviceFeatures2 have{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    have.pNext = &have12;
    vkGetPhysicalDeviceFeatures2(d->phys_, &have);
    VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    f11.storageBuffer16BitAccess = have11.storageBuffer16BitAccess;
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    f12.pNext = &f11;
    f12.bufferDeviceAddress = VK_TRUE;
    f12.shaderBufferInt64Atomics = have12.shaderBufferInt64Atomics;
    f12.storageBuffer8BitAccess = have12.storageBuffer8BitAccess;
    f12.shaderInt8 = have12.shaderInt8;
    f12.descriptorIndexing = have12.descriptorIndexing;
    f12.runtimeDescriptorArray = have12.runtimeDescriptorArray;
    f12.shaderStorageBufferArrayNonUniformIndexing = have12.shaderStorageBufferArrayNonUniformIndexing;
    f12.descriptorBindingPartiallyBound = have12.descriptorBindingPartiallyBound;
    f12.vulkanMemoryModel = have12.vulkanMemoryModel;
    f12.vulkanMemoryModelDeviceScope = have12.vulkanMemoryModelDeviceScope;
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &f12;
    f2.features.shaderInt64 = have.features.shaderInt64;
    f2.features.shaderInt16 = have.features.shaderInt16;
    f2.features.shaderFloat64 = have.features.shaderFloat64;
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &f2;
    dci.queueCreateInfoCount = static_cast<std::uint32_t>(qcis.size());
    dci.pQueueCreateInfos = qcis.data();
    dci.enabledExtensionCount = 2;
    dci.ppEnabledExtensionNames = exts;
    VkResult r = vkCreateDevice(d->phys_, &dci, nullptr, &d->device_);
    if (r != VK_SUCCESS) return make_error(fmt::format("vkCreateDevice({}): {}", d->report_.name, vk_result_name(r)), r);
    vkGetDeviceQueue(d->device_, d->queue_family_, 0, &d->queue_);
    VkQueue spare = d->queue_;
    if (main_queues == 2) vkGetDeviceQueue(d->device_, d->queue_family_, 1, &spare);
    d->copy_family_ = transfer >= 0 ? static_cast<std::uint32_t>(transfer) : d->queue_family_;
    d->amo_family_ = compute2 >= 0 ? static_cast<std::uint32_t>(compute2) : d->queue_family_;
    d->copy_queue_ = spare;
    d->amo_queue_ = spare;
    if (transfer >= 0) vkGetDeviceQueue(d->device_, d->copy_family_, 0, &d->copy_queue_);
    d->stream_queues_.assign(std::max(copy_queues, 1u), d->copy_queue_);
    for (std::uint32_t i = 1; i < copy_queues; ++i) vkGetDeviceQueue(d->device_, d->copy_family_, i, &d->stream_queues_[i]);
    if (compute2 >= 0) vkGetDeviceQueue(d->device_, d->amo_family_, 0, &d->amo_queue_);
    VKSHMEM_DEBUG("device: dispatches on family {}, copies on family {}{} ({} queues), atomics on family {}{}",
                  d->queue_family_, d->copy_family_, d->copy_queue_ == d->queue_ ? " (the same queue)" : "",
                  d->stream_queues_.size(),
                  d->amo_family_, d->amo_queue_ == d->queue_ ? " (the same queue)" : "");
    if (auto f = d->finish_setup(); !f) return f.error();
    return d;
}

Result<std::unique_ptr<VulkanDevice>> VulkanDevice::adopt(const AdoptedDevice& a) {
    if (!a.instance || !a.physical || !a.device || !a.queue)
        return make_error("vkshmemx_use_vk_device: a handle is VK_NULL_HANDLE");
    std::unique_ptr<VulkanDevice> d(new VulkanDevice);
    d->owned_ = false;
    d->instance_ = a.instance;
    d->phys_ = a.physical;
    d->device_ = a.device;
    d->report_ = describe(a.physical);
    if (!d->report_.unusable_reason.empty())
        return make_error(fmt::format("the application's device ({}) {}", d->report_.name, d->report_.unusable_reason));
    const std::vector<VkQueueFamilyProperties> qf = d->load_properties();
    if (a.family >= qf.size() || !(qf[a.family].queueFlags & VK_QUEUE_COMPUTE_BIT))
        return make_error(fmt::format("vkshmemx_use_vk_device: queue family {} of {} has no compute queues",
                                      a.family, d->report_.name));
    // One queue, the application's: the runtime's copies and atomics go there
    // too, serialized with vkshmemx_dispatch (vkshmem/vulkan.h says how the
    // application's own submissions stay out of their way).
    d->queue_family_ = d->copy_family_ = d->amo_family_ = a.family;
    d->families_ = {a.family};
    d->queue_ = d->copy_queue_ = d->amo_queue_ = a.queue;
    d->stream_queues_ = {a.queue};
    if (auto f = d->finish_setup(); !f) return f.error();
    return d;
}

std::vector<VkQueueFamilyProperties> VulkanDevice::load_properties() {
    vkGetPhysicalDeviceProperties(phys_, &props_);
    vkGetPhysicalDeviceMemoryProperties(phys_, &mem_props_);
    std::uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(phys_, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> qf(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(phys_, &nq, qf.data());
    return qf;
}

Result<void> VulkanDevice::finish_setup() {
    get_memory_fd_ = reinterpret_cast<PFN_vkGetMemoryFdKHR>(vkGetDeviceProcAddr(device_, "vkGetMemoryFdKHR"));
    get_host_ptr_props_ = reinterpret_cast<PFN_vkGetMemoryHostPointerPropertiesEXT>(
        vkGetDeviceProcAddr(device_, "vkGetMemoryHostPointerPropertiesEXT"));
    if (!get_memory_fd_ || !get_host_ptr_props_)
        return make_error(fmt::format("device {} does not expose vkGetMemoryFdKHR/vkGetMemoryHostPointerPropertiesEXT "
                                      "(enable the extensions vkshmemx_required_device_extensions() lists)",
                                      report_.name));
    for (Submitter* sub : {&copy_, &amo_}) {
        sub->family = sub == &copy_ ? copy_family_ : amo_family_;
        sub->queue = sub == &copy_ ? copy_queue_ : amo_queue_;
        if (auto c = make_submitter(*sub); !c) return c.error();
    }
    return {};
}

VulkanDevice::~VulkanDevice() {
    if (device_) {
        // The runtime's own submissions are all waited for; an adopted
        // device may still run the application's work.
        if (owned_) vkDeviceWaitIdle(device_);
        (void)drain(); // an open batch of non-blocking copies too, before its staging buffer goes
        release(staging_);
        if (sweeper_pending_) vkWaitForFences(device_, 1, &amo_.fence, VK_TRUE, UINT64_MAX);
        release(amo_mailbox_);
        if (amo_pipeline_) vkDestroyPipeline(device_, amo_pipeline_, nullptr);
        if (amo_layout_) vkDestroyPipelineLayout(device_, amo_layout_, nullptr);
        if (amo_module_) vkDestroyShaderModule(device_, amo_module_, nullptr);
        for (Submitter* sub : {&copy_, &amo_}) {
            if (sub->fence) vkDestroyFence(device_, sub->fence, nullptr);
            if (sub->pool) vkDestroyCommandPool(device_, sub->pool, nullptr);
        }
        if (owned_) vkDestroyDevice(device_, nullptr);
    }
    if (instance_ && owned_) vkDestroyInstance(instance_, nullptr);
}

Result<void> VulkanDevice::finish_memory(DeviceMemory& m, bool map) {
    const auto fl = mem_props_.memoryTypes[m.type_index].propertyFlags;
    m.host_visible = fl & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    m.host_coherent = fl & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    m.host_cached = fl & VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    m.device_local = fl & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    if (map && m.host_visible) {
        VkResult r = vkMapMemory(device_, m.memory, 0, VK_WHOLE_SIZE, 0, &m.mapped);
        if (r != VK_SUCCESS) return make_error(fmt::format("vkMapMemory of {} bytes: {}", m.size, vk_result_name(r)), r);
    }
    return {};
}

namespace {
// handle 0: memory that is not shared with other processes.
VkBuffer make_buffer(VkDevice dev, std::size_t size, VkExternalMemoryHandleTypeFlagBits handle,
                     const std::vector<std::uint32_t>& families, VkResult* r) {
    VkExternalMemoryBufferCreateInfo ext{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
    ext.handleTypes = static_cast<VkExternalMemoryHandleTypeFlags>(handle);
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.pNext = handle ? &ext : nullptr;
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
                VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT; // (the recorded waits' slices: vulkan/cmd.cpp)
    // Shaders and the runtime's copies and atomics use it from several queue
    // families: concurrent sharing, no ownership transfers.
    bci.sharingMode = families.size() > 1 ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE;
    bci.queueFamilyIndexCount = families.size() > 1 ? static_cast<std::uint32_t>(families.size()) : 0;
    bci.pQueueFamilyIndices = families.size() > 1 ? families.data() : nullptr;
    VkBuffer b = VK_NULL_HANDLE;
    *r = vkCreateBuffer(dev, &bci, nullptr, &b);
    return *r == VK_SUCCESS ? b : VK_NULL_HANDLE;
}

std::uint64_t device_address(VkDevice dev, VkBuffer b) {
    VkBufferDeviceAddressInfo ai{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    ai.buffer = b;
    return vkGetBufferDeviceAddress(dev, &ai);
}
} // namespace

Result<VulkanDevice::BufferPlan> VulkanDevice::plan_buffer(std::size_t size, VkExternalMemoryHandleTypeFlagBits handle) {
    BufferPlan plan;
    VkResult r;
    plan.buffer = make_buffer(device_, size, handle, families_, &r);
    if (!plan.buffer)
        return make_error(fmt::format("vkCreateBuffer over {} bytes of external memory: {}", size, vk_result_name(r)),
                          r);
    VkMemoryDedicatedRequirements ded{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
    VkMemoryRequirements2 req{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
    req.pNext = &ded;
    VkBufferMemoryRequirementsInfo2 ri{VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2};
    ri.buffer = plan.buffer;
    vkGetBufferMemoryRequirements2(device_, &ri, &req);
    plan.type_bits = req.memoryRequirements.memoryTypeBits;
    plan.size = req.memoryRequirements.size;
    // Some drivers (NVIDIA) want exportable memory dedicated to its buffer;
    // an importer then asks for the same, since it plans the same buffer.
    plan.dedicated = ded.requiresDedicatedAllocation || ded.prefersDedicatedAllocation;
    return plan;
}

Result<void> VulkanDevice::bind_plan(DeviceMemory& m, BufferPlan& plan) {
    VkResult r = vkBindBufferMemory(device_, plan.buffer, m.memory, 0);
    if (r != VK_SUCCESS) {
        vkDestroyBuffer(device_, plan.buffer, nullptr);
        return make_error(fmt::format("vkBindBufferMemory: {}", vk_result_name(r)), r);
    }
    m.buffer = plan.buffer;
    m.address = device_address(device_, m.buffer);
    plan.buffer = VK_NULL_HANDLE;
    return {};
}

Result<DeviceMemory> VulkanDevice::import_host(void* ptr, std::size_t size) {
    VkMemoryHostPointerPropertiesEXT hp{VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
    VkResult r = get_host_ptr_props_(device_, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, ptr, &hp);
    if (r != VK_SUCCESS) return make_error(fmt::format("vkGetMemoryHostPointerPropertiesEXT: {}", vk_result_name(r)), r);
    int type = -1;
    for (std::uint32_t i = 0; i < mem_props_.memoryTypeCount; ++i)
        if ((hp.memoryTypeBits & (1u << i)) &&
            (mem_props_.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) {
            type = static_cast<int>(i);
            break;
        }
    if (type < 0) return make_error("no memory type accepts imported host memory");
    VkImportMemoryHostPointerInfoEXT imp{VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT};
    imp.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    imp.pHostPointer = ptr;
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    imp.pNext = &flags;
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.pNext = &imp;
    ai.allocationSize = size;
    ai.memoryTypeIndex = static_cast<std::uint32_t>(type);
    DeviceMemory m;
    r = vkAllocateMemory(device_, &ai, nullptr, &m.memory);
    if (r != VK_SUCCESS)
        return make_error(fmt::format("importing {} bytes of host memory: {}", size, vk_result_name(r)), r);
    m.size = size;
    m.type_index = static_cast<std::uint32_t>(type);
    if (auto f = finish_memory(m, false); !f) return f.error();
    m.mapped = ptr;
    auto plan = plan_buffer(size, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT);
    if (!plan) return plan.error();
    if (!(plan->type_bits & (1u << m.type_index)) || plan->size > size) {
        vkDestroyBuffer(device_, plan->buffer, nullptr);
        return make_error("a buffer over imported host memory does not fit the memory's type or size");
    }
    if (auto b = bind_plan(m, *plan); !b) return b.error();
    return m;
}

bool VulkanDevice::exportable_is_mappable(std::size_t size) {
    auto plan = plan_buffer(size, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT);
    if (!plan) return false;
    vkDestroyBuffer(device_, plan->buffer, nullptr);
    for (std::uint32_t i = 0; i < mem_props_.memoryTypeCount; ++i) {
        auto fl = mem_props_.memoryTypes[i].propertyFlags;
        if ((plan->type_bits & (1u << i)) && (fl & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) &&
            (fl & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
            return true;
    }
    return false;
}

Result<DeviceMemory> VulkanDevice::allocate_mapped(std::size_t size, MappedUse use) {
    auto plan = plan_buffer(size, static_cast<VkExternalMemoryHandleTypeFlagBits>(0));
    if (!plan) return plan.error();
    // HostReads: cached where offered, and not device-local (the BAR, which
    // the CPU must not read) unless the device is the CPU. ShaderReads:
    // device-local, where a running shader sees host writes at once.
    const VkMemoryPropertyFlags need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                                       (use == MappedUse::ShaderReads ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT : 0);
    int type = -1, best = -1;
    for (std::uint32_t i = 0; i < mem_props_.memoryTypeCount; ++i) {
        const auto fl = mem_props_.memoryTypes[i].propertyFlags;
        if (!(plan->type_bits & (1u << i)) || (fl & need) != need) continue;
        const int score = use == MappedUse::ShaderReads
                              ? 0
                              : ((fl & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) ? 2 : 0) +
                                    (is_cpu() || !(fl & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) ? 1 : 0);
        if (score > best) best = score, type = static_cast<int>(i);
    }
    if (type < 0) {
        vkDestroyBuffer(device_, plan->buffer, nullptr);
        return make_error(fmt::format("no {} memory type", use == MappedUse::ShaderReads
                                                                ? "DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT"
                                                                : "HOST_VISIBLE|HOST_COHERENT"));
    }
    return allocate_for(*plan, static_cast<std::uint32_t>(type), nullptr);
}

Result<DeviceMemory> VulkanDevice::allocate_device_heap(std::size_t size, bool exportable) {
    const auto handle = exportable ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT
                                   : static_cast<VkExternalMemoryHandleTypeFlagBits>(0);
    auto plan = plan_buffer(size, handle);
    if (!plan) return plan.error();
    // Prefer a device-local type the CPU can map (resizable BAR, or unified
    // memory on CPU and integrated devices), else plain device-local.
    int type = -1;
    for (int want_visible = 1; want_visible >= 0 && type < 0; --want_visible)
        for (std::uint32_t i = 0; i < mem_props_.memoryTypeCount; ++i) {
            auto fl = mem_props_.memoryTypes[i].propertyFlags;
            if (!(plan->type_bits & (1u << i)) || !(fl & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) continue;
            if (want_visible && !(fl & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) continue;
            if (mem_props_.memoryHeaps[mem_props_.memoryTypes[i].heapIndex].size < plan->size) continue;
            type = static_cast<int>(i);
            break;
        }
    if (type < 0) {
        vkDestroyBuffer(device_, plan->buffer, nullptr);
        return make_error(fmt::format("no DEVICE_LOCAL memory type has a heap of {} bytes", size));
    }
    VKSHMEM_DEBUG("device heap: buffer accepts memory types {:#x}, dedicated {}, exportable {}, type {} (flags {:#x})",
                  plan->type_bits, plan->dedicated, exportable, type, mem_props_.memoryTypes[type].propertyFlags);
    VkExportMemoryAllocateInfo exp{VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO};
    exp.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    auto m = allocate_for(*plan, static_cast<std::uint32_t>(type), exportable ? &exp : nullptr);
    if (!m)
        return make_error(fmt::format("allocating a {}-byte device heap: {}; lower VKSHMEM_DEVICE_HEAP_SIZE", size,
                                      m.error().message),
                          m.error().vk_result);
    return m;
}

Result<DeviceMemory> VulkanDevice::allocate_for(BufferPlan& plan, std::uint32_t type, void* chain) {
    VkMemoryDedicatedAllocateInfo ded{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    ded.buffer = plan.buffer;
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    flags.pNext = chain;
    if (plan.dedicated) {
        ded.pNext = &flags;
    }
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.pNext = plan.dedicated ? static_cast<void*>(&ded) : static_cast<void*>(&flags);
    ai.allocationSize = plan.size;
    ai.memoryTypeIndex = type;
    DeviceMemory m;
    VkResult r = vkAllocateMemory(device_, &ai, nullptr, &m.memory);
    if (r != VK_SUCCESS) {
        vkDestroyBuffer(device_, plan.buffer, nullptr);
        return make_error(vk_result_name(r), r);
    }
    m.size = plan.size;
    m.type_index = type;
    m.dedicated = plan.dedicated;
    if (auto f = finish_memory(m, true); !f) return f.error();
    if (auto b = bind_plan(m, plan); !b) return b.error();
    return m;
}

Result<int> VulkanDevice::export_fd(const DeviceMemory& m) {
    VkMemoryGetFdInfoKHR gi{VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
    gi.memory = m.memory;
    gi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    int fd = -1;
    VkResult r = get_memory_fd_(device_, &gi, &fd);
    if (r != VK_SUCCESS) return make_error(fmt::format("vkGetMemoryFdKHR: {}", vk_result_name(r)), r);
    return fd;
}

Result<DeviceMemory> VulkanDevice::import_fd(int fd, std::size_t size, std::uint32_t type_index) {
    auto plan = plan_buffer(size, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT);
    if (!plan) {
        ::close(fd);
        return plan.error();
    }
    VkImportMemoryFdInfoKHR imp{VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR};
    imp.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    imp.fd = fd;
    auto m = allocate_for(*plan, type_index, &imp);
    if (!m) {
        ::close(fd); // on failure the fd still belongs to us
        return make_error(fmt::format("importing a peer's device heap: {}", m.error().message), m.error().vk_result);
    }
    return m;
}

void VulkanDevice::release(DeviceMemory& m) {
    if (!device_) return;
    if (m.buffer) vkDestroyBuffer(device_, m.buffer, nullptr);
    // Host-pointer imports are not vkMapMemory'd; everything else is unmapped
    // implicitly by vkFreeMemory.
    if (m.memory) vkFreeMemory(device_, m.memory, nullptr);
    m = DeviceMemory{};
}

} // namespace vkshmem
