// SPDX-License-Identifier: BSL-1.0
// vkshmem-coll-perf: the device collectives and the queue-ordered operations,
// each next to what the device does without vkshmem, measured in one run on
// every PE (PE 0 prints).
//
//   oshrun -np N vkshmem-coll-perf [--rounds R] [--mib M] [--no-kernel] [--probe]
//   --rounds R: operations per dispatch or command buffer (default 100;
//   lavapipe: about 10)
//   --mib M: the bulk sizes: fcollect and alltoall move M MiB per PE, putmem M
//   MiB (default 1)
//   --no-kernel: leave out the in-kernel collectives (they need every PE's
//   kernel running at
//                once: not PEs that share a GPU, whose kernels the driver
//                time-slices)
//
//   --probe: also time, in a kernel, each step the in-kernel collectives are made
//   of (a memory barrier, reads of the peer table and of the state block, an
//   atomic add, a poll, a route lookup, vkshmem_init, a thread team sync, the
//   team's busy word), one invocation, rounds of one step after another
//
// Rows: in-kernel (one workgroup of 256 per PE): barrier, 8-byte double sum
// reduction, fcollectmem and alltoallmem; recorded into a command buffer
// (vkshmemx_cmd_*): barrier_all, 8-byte double sum reduction, fcollectmem,
// alltoallmem, putmem to the next PE, and vkCmdCopyBuffer device -> device of
// the same size in the same kind of command buffer (raw). Each figure is the
// best of 5 of (time of R operations - time of none) / R.
#include <shmem.h>
#include <shmemx.h>
#include <vkshmem/vulkan.h>

#include "coll_comp_spv.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void die(const char *what) {
  std::fprintf(stderr, "vkshmem-coll-perf: %s\n", what);
  shmem_global_exit(1);
  std::abort();
}

constexpr int kReps = 5;

// Best of kReps of f() after a warm-up, every PE starting together.
double best(const std::function<void()> &f) {
  double t = 1e30;
  for (int r = 0; r <= kReps; ++r) {
    shmem_barrier_all();
    const double t0 = now();
    f();
    if (r)
      t = std::min(t, now() - t0);
  }
  return t;
}

struct CollPush {
  std::uint64_t state, dst, src, bytes;
  std::uint32_t rounds, mode;
};

// A reusable command buffer of the runtime's queue family.
class Recording {
public:
  Recording() {
    std::uint32_t family = 0;
    vkshmemx_vk_queue(&family);
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.queueFamilyIndex = family;
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    VkCommandBufferAllocateInfo ai{
        VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (vkCreateCommandPool(dev(), &pci, nullptr, &pool_) != VK_SUCCESS)
      die("vkCreateCommandPool");
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    if (vkAllocateCommandBuffers(dev(), &ai, &cb_) != VK_SUCCESS)
      die("vkAllocateCommandBuffers");
    if (vkCreateFence(dev(), &fci, nullptr, &fence_) != VK_SUCCESS)
      die("vkCreateFence");
  }
  ~Recording() {
    vkDestroyFence(dev(), fence_, nullptr);
    vkDestroyCommandPool(dev(), pool_, nullptr);
  }
  // Records `rounds` times what `add` records.
  void record(int rounds, const std::function<void(VkCommandBuffer)> &add) {
    vkResetCommandBuffer(cb_, 0);
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vkBeginCommandBuffer(cb_, &bi);
    for (int r = 0; r < rounds; ++r)
      add(cb_);
    vkEndCommandBuffer(cb_);
  }
  void run() {
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb_;
    if (vkshmemx_queue_submit(1, &si, fence_) != VK_SUCCESS)
      die("vkQueueSubmit");
    vkWaitForFences(dev(), 1, &fence_, VK_TRUE, UINT64_MAX);
    vkResetFences(dev(), 1, &fence_);
  }
  // Seconds per operation: (R of them - none) / R, best of kReps each.
  double per_op(int rounds, const std::function<void(VkCommandBuffer)> &add) {
    record(0, add);
    const double empty = best([&] { run(); });
    record(rounds, add);
    return std::max(best([&] { run(); }) - empty, 0.0) / rounds;
  }

private:
  static VkDevice dev() { return vkshmemx_vk_device(); }
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
};

// vkCmdCopyBuffer between two device-local buffers of `bytes` (the ceiling of a
// device copy).
class RawCopy {
public:
  explicit RawCopy(std::size_t bytes) : bytes_(bytes) {
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(vkshmemx_vk_physical_device(), &mp);
    for (int i = 0; i < 2; ++i) {
      VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
      bci.size = bytes;
      bci.usage =
          VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
      if (vkCreateBuffer(dev(), &bci, nullptr, &buf_[i]) != VK_SUCCESS)
        die("vkCreateBuffer");
      VkMemoryRequirements req;
      vkGetBufferMemoryRequirements(dev(), buf_[i], &req);
      std::uint32_t type = UINT32_MAX;
      for (std::uint32_t t = 0; t < mp.memoryTypeCount && type == UINT32_MAX;
           ++t)
        if ((req.memoryTypeBits >> t & 1) &&
            (mp.memoryTypes[t].propertyFlags &
             VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
          type = t;
      if (type == UINT32_MAX)
        die("no device-local memory type");
      VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
      mai.allocationSize = req.size;
      mai.memoryTypeIndex = type;
      if (vkAllocateMemory(dev(), &mai, nullptr, &mem_[i]) != VK_SUCCESS)
        die("vkAllocateMemory");
      vkBindBufferMemory(dev(), buf_[i], mem_[i], 0);
    }
  }
  ~RawCopy() {
    for (int i = 0; i < 2; ++i) {
      vkDestroyBuffer(dev(), buf_[i], nullptr);
      vkFreeMemory(dev(), mem_[i], nullptr);
    }
  }
  void record(VkCommandBuffer cb) const {
    VkBufferCopy region{0, 0, bytes_};
    vkCmdCopyBuffer(cb, buf_[0], buf_[1], 1, &region);
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask =
        VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr,
                         0, nullptr);
  }

private:
  static VkDevice dev() { return vkshmemx_vk_device(); }
  std::size_t bytes_;
  VkBuffer buf_[2]{};
  VkDeviceMemory mem_[2]{};
};

void row_us(const char *what, double s) {
  if (shmem_my_pe() == 0)
    std::printf("%-64s %10.2f us\n", what, s * 1e6);
  std::fflush(stdout);
}
void row_gbps(const char *what, double gbps, double raw) {
  if (shmem_my_pe() != 0)
    return;
  if (raw > 0)
    std::printf("%-64s %10.2f GB/s %6.1f%%\n", what, gbps, 100.0 * gbps / raw);
  else
    std::printf("%-64s %10.2f GB/s\n", what, gbps);
  std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv) {
  int rounds = 100;
  std::size_t mib = 1;
  bool kernel = true, probes = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc)
      rounds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--mib" && i + 1 < argc)
      mib = std::max<std::size_t>(1, std::strtoul(argv[++i], nullptr, 10));
    else if (a == "--no-kernel")
      kernel = false;
    else if (a == "--probe")
      probes = true;
    else
      die("usage: vkshmem-coll-perf [--rounds R] [--mib M] [--no-kernel] "
          "[--probe]");
  }
  shmem_init();
  if (!vkshmemx_device_state())
    die("needs a Vulkan device");
  const int npes = shmem_n_pes(), me = shmem_my_pe();
  const std::size_t bytes = mib << 20;
  auto *src = static_cast<char *>(
      shmem_malloc_with_hints(bytes * npes, SHMEMX_MALLOC_DEVICE));
  auto *dst = static_cast<char *>(
      shmem_malloc_with_hints(bytes * npes, SHMEMX_MALLOC_DEVICE));
  auto *dsrc =
      static_cast<double *>(shmem_malloc_with_hints(64, SHMEMX_MALLOC_DEVICE));
  auto *ddst =
      static_cast<double *>(shmem_malloc_with_hints(64, SHMEMX_MALLOC_DEVICE));
  if (!src || !dst || !dsrc || !ddst)
    die("allocation failed: raise VKSHMEM_DEVICE_HEAP_SIZE");
  if (me == 0) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(vkshmemx_vk_physical_device(), &props);
    std::printf("vkshmem-coll-perf: %d PEs on %s, %d operations per dispatch "
                "or command buffer, %zu MiB per PE, "
                "best of %d\n",
                npes, props.deviceName, rounds, mib, kReps);
  }

  if (kernel) {
    vkshmemx_kernel *k = vkshmemx_kernel_create(
        coll_comp_spv, sizeof coll_comp_spv, sizeof(CollPush));
    if (!k)
      die("vkshmemx_kernel_create");
    auto time_kernel = [&](std::uint32_t mode, std::uint64_t d, std::uint64_t s,
                           std::uint64_t b, int r) {
      CollPush p{vkshmemx_device_state(), d, s, b, 0, mode};
      auto run = [&] {
        if (vkshmemx_dispatch(k, 1, 1, 1, &p, sizeof p))
          die("a dispatch failed");
      };
      const double empty = best(run);
      p.rounds = static_cast<std::uint32_t>(r);
      return std::max(best(run) - empty, 0.0) / r;
    };
    const std::uint64_t S = vkshmemx_device_address(src),
                        D = vkshmemx_device_address(dst);
    row_us("in-kernel shmem_barrier_all_wg", time_kernel(0, 0, 0, 0, rounds));
    row_us("in-kernel shmem_double_sum_reduce_wg, 8 bytes",
           time_kernel(1, vkshmemx_device_address(ddst),
                       vkshmemx_device_address(dsrc), 0, rounds));
    const int bulk = std::max(1, rounds / 10);
    row_gbps("in-kernel shmem_fcollectmem_wg, received per PE",
             bytes * (npes - 1) / time_kernel(2, D, S, bytes, bulk) / 1e9, 0);
    row_gbps("in-kernel shmem_alltoallmem_wg, received per PE",
             bytes * (npes - 1) / time_kernel(3, D, S, bytes, bulk) / 1e9, 0);
    if (probes) {
      static const char *const steps[] = {
          "probe: device-scope memory barrier",
          "probe: read of the peer table",
          "probe: read of the state block",
          "probe: atomic add to a device-heap word",
          "probe: poll of a device-heap word",
          "probe: route lookup to this PE",
          "probe: vkshmem_init",
          "probe: shmem_team_sync (thread form), world",
          "probe: claim and release of the world team's busy word",
          "probe: shmem_sync_all_wg",
          "probe: workgroup barrier and memory barrier, every invocation",
          "probe: shmem_team_sync by invocation 0 between workgroup barriers",
          "probe: shmem_quiet, every invocation"};
      const std::uint64_t w = vkshmemx_device_address(ddst);
      for (std::uint32_t m = 4; m < 17; ++m)
        row_us(steps[m - 4], time_kernel(m, w, 0, 0, rounds));
    }
    vkshmemx_kernel_destroy(k);
  }

  {
    Recording rec;
    row_us("recorded vkshmemx_cmd_barrier_all",
           rec.per_op(rounds, [](VkCommandBuffer cb) {
             vkshmemx_cmd_barrier_all(cb);
           }));
    row_us("recorded vkshmemx_cmd_double_sum_reduce, 8 bytes",
           rec.per_op(rounds, [&](VkCommandBuffer cb) {
             vkshmemx_cmd_double_sum_reduce(cb, SHMEM_TEAM_WORLD, ddst, dsrc,
                                            1);
           }));
    const int bulk = std::max(1, rounds / 10);
    const RawCopy raw(bytes);
    const double raw_gbps = bytes / rec.per_op(bulk, [&](VkCommandBuffer cb) {
      raw.record(cb);
    }) / 1e9;
    row_gbps("vkCmdCopyBuffer device -> device, same size (raw)", raw_gbps, 0);
    row_gbps("recorded vkshmemx_cmd_putmem to the next PE's device heap",
             bytes /
                 rec.per_op(bulk,
                            [&](VkCommandBuffer cb) {
                              vkshmemx_cmd_putmem(cb, dst, src, bytes,
                                                  (me + 1) % npes);
                            }) /
                 1e9,
             raw_gbps);
    row_gbps("recorded vkshmemx_cmd_fcollectmem, received per PE",
             bytes * (npes - 1) /
                 rec.per_op(bulk,
                            [&](VkCommandBuffer cb) {
                              vkshmemx_cmd_fcollectmem(cb, SHMEM_TEAM_WORLD,
                                                       dst, src, bytes);
                            }) /
                 1e9,
             raw_gbps);
    row_gbps("recorded vkshmemx_cmd_alltoallmem, received per PE",
             bytes * (npes - 1) /
                 rec.per_op(bulk,
                            [&](VkCommandBuffer cb) {
                              vkshmemx_cmd_alltoallmem(cb, SHMEM_TEAM_WORLD,
                                                       dst, src, bytes);
                            }) /
                 1e9,
             raw_gbps);
  } // the command buffer and the raw buffers go before shmem_finalize
  shmem_barrier_all();
  shmem_free(ddst);
  shmem_free(dsrc);
  shmem_free(dst);
  shmem_free(src);
  shmem_finalize();
  return 0;
}
