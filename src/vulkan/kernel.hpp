// User compute kernels: a pipeline with one push-constant block, dispatched
// on the application queue and waited for.
#pragma once

#include "core/result.hpp"
#include "vulkan/device.hpp"

#include <cstdint>
#include <memory>

namespace vkshmem {

class VulkanKernel {
public:
    static Result<std::unique_ptr<VulkanKernel>> create(VulkanDevice& dev, const std::uint32_t* spirv,
                                                        std::size_t bytes, std::uint32_t push_bytes);
    ~VulkanKernel();
    // Submits one dispatch; wait() blocks until it has finished.
    Result<void> submit(std::uint32_t gx, std::uint32_t gy, std::uint32_t gz, const void* push,
                        std::uint32_t push_bytes);
    Result<void> wait();
    std::uint32_t push_bytes() const { return push_bytes_; }

private:
    explicit VulkanKernel(VulkanDevice& d) : dev_(d) {}
    VulkanDevice& dev_;
    VkShaderModule module_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    std::uint32_t push_bytes_ = 0;
};

} // namespace vkshmem
