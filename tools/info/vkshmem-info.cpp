// SPDX-License-Identifier: BSL-1.0
// vkshmem-info: what this build and this machine offer — version, Vulkan
// devices with the capabilities that decide the routes (DESIGN §1), heaps,
// transports and the environment table. Runs without a launcher.
#include "core/config.hpp"
#include "core/version.hpp"
#include "transports/transport.hpp"
#include "vulkan/device.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <string>

using namespace vkshmem;

namespace {

void usage(std::FILE* to) {
    std::fputs("Usage: vkshmem-info [OPTION]\n"
               "Reports what this vkshmem build and this machine offer: the library version, the Vulkan\n"
               "devices and the capabilities that decide the routes, the heaps, the network transports\n"
               "and the environment variables. It runs without a launcher.\n"
               "\n"
               "Options:\n"
               "  -a, --all           everything (the default): version, devices, heaps, transports\n"
               "                      and the environment table with the current values\n"
               "  -d, --devices       the Vulkan devices and their capabilities only\n"
               "  -e, --env           the environment variables with their current values\n"
               "  -e --markdown       the environment reference in Markdown (docs/env.md)\n"
               "  -V, --version       the version and the git revision built, then exit\n"
               "  -h, --help          this help, then exit\n"
               "\n"
               "Environment: every variable of `vkshmem-info -e` applies (VKSHMEM_DEVICE picks the\n"
               "device, VKSHMEM_NETWORK and VKSHMEM_OFI_PROVIDER the transport shown as chosen).\n",
               to);
}

const char* yn(bool b) { return b ? "yes" : "no"; }

std::string uuid_text(const std::uint8_t* u) {
    std::string s;
    for (int i = 0; i < 16; ++i) s += fmt::format("{:02x}{}", u[i], (i == 3 || i == 5 || i == 7 || i == 9) ? "-" : "");
    return s;
}

void print_devices(const Config& cfg) {
    std::string err;
    auto devs = enumerate_devices(&err);
    std::puts("Vulkan devices:");
    if (devs.empty()) {
        std::printf("  none (%s): PEs run host-only, both heaps in host memory\n",
                    err.empty() ? "no physical device" : err.c_str());
        return;
    }
    for (std::size_t i = 0; i < devs.size(); ++i) {
        const auto& d = devs[i];
        std::printf("  [%zu] %s (%s), Vulkan %u.%u, %s\n", i, d.name.c_str(), d.type.c_str(),
                    VK_API_VERSION_MAJOR(d.api_version), VK_API_VERSION_MINOR(d.api_version), d.driver.c_str());
        std::printf("      deviceUUID %s\n", uuid_text(d.uuid).c_str());
        std::printf("      usable by vkshmem: %s\n",
                    d.unusable_reason.empty() ? "yes" : ("no, " + d.unusable_reason).c_str());
        std::printf("      external memory: OPAQUE_FD %s, host pointer import %s (alignment %llu), dma-buf %s\n",
                    yn(d.ext_memory_fd), yn(d.ext_memory_host),
                    static_cast<unsigned long long>(d.host_import_alignment), yn(d.ext_dma_buf));
        std::printf("      buffer device address %s, shaderInt64 %s, 64-bit buffer atomics %s, map_memory_placed %s\n",
                    yn(d.buffer_device_address), yn(d.shader_int64), yn(d.atomic_int64), yn(d.ext_map_placed));
        std::printf("      DEVICE_LOCAL|HOST_VISIBLE memory: %s; device-local heap %llu MiB; maxStorageBufferRange "
                    "%llu MiB\n",
                    yn(d.device_local_host_visible), static_cast<unsigned long long>(d.device_local_bytes >> 20),
                    static_cast<unsigned long long>(d.max_storage_buffer_range >> 20));
        const char* route = d.type == "cpu" ? "direct CPU loads and stores (the device memory is host RAM)"
                            : d.device_local_host_visible
                                ? "CPU stores through the BAR for puts up to VKSHMEM_BAR_PUT_MAX; device copies "
                                  "for larger puts and every get"
                                : "device copies only (no host-visible device-local memory)";
        std::printf("      host access to its device heap: %s\n", route);
    }
    if (!cfg.VKSHMEM_DEVICE.empty()) std::printf("  selected by VKSHMEM_DEVICE=%s\n", cfg.VKSHMEM_DEVICE.c_str());
    else std::puts("  each PE takes the usable GPUs (else CPU devices) in turn by node-local rank");
}

} // namespace

int main(int argc, char** argv) {
    bool env = false, markdown = false, devices_only = false, all = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "-e" || a == "--env") env = true;
        else if (a == "--markdown") markdown = true;
        else if (a == "-d" || a == "--devices") devices_only = true;
        else if (a == "-a" || a == "--all") all = true;
        else if (a == "-V" || a == "--version") {
            std::printf("vkshmem-info (vkshmem) %s\ngit revision %s\nOpenSHMEM 1.6\n", version(), revision());
            return 0;
        } else if (a == "-h" || a == "--help") {
            usage(stdout);
            return 0;
        } else {
            std::fprintf(stderr, "vkshmem-info: unknown option %s\n", a.c_str());
            usage(stderr);
            return 2;
        }
    }
    if (markdown && !env) {
        std::fputs("vkshmem-info: --markdown applies to the environment reference: use -e --markdown\n", stderr);
        return 2;
    }
    if (all + env + devices_only > 1) {
        std::fputs("vkshmem-info: -a, -d and -e each choose what to print: give one of them\n", stderr);
        return 2;
    }
    Config cfg;
    if (auto e = load_config(cfg, [](const char* n) -> const char* { return std::getenv(n); })) {
        std::fprintf(stderr, "vkshmem-info: %s: %s\n", e->variable.c_str(), e->message.c_str());
        return 1;
    }
    if (env) {
        std::fputs(env_reference(markdown, markdown ? nullptr : &cfg).c_str(), stdout);
        return 0;
    }
    if (devices_only) {
        print_devices(cfg);
        return 0;
    }
    std::printf("vkshmem %s (git %s), OpenSHMEM %d.%d\n", version(), revision(), 1, 6);
    print_devices(cfg);
    std::puts("Symmetric heaps (per PE):");
    std::printf("  host heap   %llu bytes (SHMEM_SYMMETRIC_SIZE): memfd shared memory, imported into Vulkan with "
                "VK_EXT_external_memory_host; shmem_malloc allocates here\n",
                static_cast<unsigned long long>(cfg.SHMEM_SYMMETRIC_SIZE));
    std::printf("  device heap %llu bytes (VKSHMEM_DEVICE_HEAP_SIZE): DEVICE_LOCAL memory exported as OPAQUE_FD; "
                "shmem_malloc_with_hints(size, SHMEMX_MALLOC_DEVICE) allocates here\n",
                static_cast<unsigned long long>(cfg.VKSHMEM_DEVICE_HEAP_SIZE));
    std::printf("  static data: the program's globals, %s (VKSHMEM_SYMMETRIC_DATA)\n",
                cfg.VKSHMEM_SYMMETRIC_DATA ? "symmetric" : "not symmetric");
    std::puts("Transports:");
    std::puts("  shm (chosen for node-local PEs): host heaps and static data by memfd passing; device heaps by "
              "OPAQUE_FD import between PEs on one device (same deviceUUID)");
    {
        auto ucx = net::make_ucx(0, 1, cfg.VKSHMEM_NBI_BATCH, cfg.VKSHMEM_NBI_DEFER);
        if (ucx) std::printf("  ucx: available: %s\n", (*ucx)->describe().c_str());
        else std::printf("  ucx: not available: %s\n", ucx.error().message.c_str());
        auto ofi = net::make_ofi(0, 1, cfg.VKSHMEM_OFI_PROVIDER, cfg.VKSHMEM_OFI_ATOMICS, cfg.VKSHMEM_NBI_BATCH,
                                 cfg.VKSHMEM_NBI_DEFER);
        if (ofi) std::printf("  ofi: available: %s\n", (*ofi)->describe().c_str());
        else std::printf("  ofi: not available: %s\n", ofi.error().message.c_str());
        const Network want = cfg.VKSHMEM_NETWORK;
        const char* pick = want == Network::Ucx   ? (ucx ? "ucx" : nullptr)
                           : want == Network::Ofi ? (ofi ? "ofi" : nullptr)
                                                  : (ucx ? "ucx" : ofi ? "ofi" : nullptr);
        const char* why = want == Network::Auto
                              ? (ucx ? "auto: UCX starts here" : "auto: UCX cannot start, libfabric can")
                              : "VKSHMEM_NETWORK";
        if (want == Network::None)
            std::puts("  network: none (VKSHMEM_NETWORK=none): PEs on other nodes are unreachable");
        else if (!pick)
            std::printf("  network: none works here (VKSHMEM_NETWORK=%s): a job must run on one node\n",
                        std::string(to_text(want)).c_str());
        else
            std::printf("  network: %s (%s) for PEs on other nodes%s\n", pick, why,
                        cfg.VKSHMEM_FORCE_NETWORK ? ", and for node-local PEs too (VKSHMEM_FORCE_NETWORK=1)" : "");
        if (pick)
            std::puts("  device heaps over the network: registered where the CPU maps them (lavapipe, host-only "
                      "PEs); a GPU's through its owner's proxy (active messages over the transport), never "
                      "registered with the network itself (no dma-buf path)");
    }
    std::puts("Bootstrap: PMIx (oshrun, mpirun, prterun, srun --mpi=pmix); a singleton without a launcher");
    std::puts("Environment:");
    std::fputs(env_reference(false, &cfg).c_str(), stdout);
    return 0;
}
