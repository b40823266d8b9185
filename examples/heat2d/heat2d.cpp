// SPDX-License-Identifier: BSL-1.0
// heat2d: 2D heat diffusion on a grid split across PEs, computed by a compute
// shader on each PE's Vulkan device. Each step the shader updates the PE's
// band of rows and puts its edge rows into the neighbours' device heaps
// (shmem_float_p from the shader); the host separates steps with
// shmem_barrier_all. PE 0 then gathers the grid, checks it against a
// single-PE reference computed on the CPU, and writes it as a PNG.
//
//   oshrun -np 4 heat2d [--nx 160] [--ny 120] [--steps 300] [--png heat2d.png]
#include <shmem.h>
#include <shmemx.h>
#include <vkshmem/vulkan.h>

#include "heat2d_comp_spv.h"
#include "png.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Push {
    std::uint64_t state, src, dst;
    std::uint32_t nx, rows, first_row, ny;
    float alpha;
};

// The initial field: a hot top edge, a warm square off-centre, cold elsewhere.
float initial(std::uint32_t x, std::uint32_t y, std::uint32_t nx, std::uint32_t ny) {
    if (y == 0) return 100.0f;
    if (x > nx / 4 && x < nx / 2 && y > ny / 2 && y < (3 * ny) / 4) return 60.0f;
    return 0.0f;
}

// The same explicit scheme, one PE, on the CPU.
std::vector<float> reference(std::uint32_t nx, std::uint32_t ny, int steps, float alpha) {
    std::vector<float> a(std::size_t(nx) * ny), b(a.size());
    for (std::uint32_t y = 0; y < ny; ++y)
        for (std::uint32_t x = 0; x < nx; ++x) a[std::size_t(y) * nx + x] = initial(x, y, nx, ny);
    for (int s = 0; s < steps; ++s) {
        for (std::uint32_t y = 0; y < ny; ++y)
            for (std::uint32_t x = 0; x < nx; ++x) {
                const std::size_t i = std::size_t(y) * nx + x;
                float u = a[i];
                if (x > 0 && x + 1 < nx && y > 0 && y + 1 < ny)
                    u += alpha * (a[i - nx] + a[i + nx] + a[i - 1] + a[i + 1] - 4.0f * u);
                b[i] = u;
            }
        std::swap(a, b);
    }
    return a;
}

int usage(const char* msg) {
    std::fprintf(stderr, "heat2d: %s\nusage: heat2d [--nx N] [--ny N] [--steps N] [--png FILE]\n", msg);
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    std::uint32_t nx = 160, ny = 120;
    int steps = 300;
    std::string png = "heat2d.png";
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (i + 1 >= argc) return usage(("missing value after " + a).c_str());
        if (a == "--nx") nx = static_cast<std::uint32_t>(std::atoi(argv[++i]));
        else if (a == "--ny") ny = static_cast<std::uint32_t>(std::atoi(argv[++i]));
        else if (a == "--steps") steps = std::atoi(argv[++i]);
        else if (a == "--png") png = argv[++i];
        else return usage(("unknown option " + a).c_str());
    }

    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    if (nx < 3 || ny % static_cast<std::uint32_t>(npes) != 0 || ny / static_cast<std::uint32_t>(npes) < 1) {
        if (me == 0) std::fprintf(stderr, "heat2d: --ny %u must be a multiple of the %d PEs\n", ny, npes);
        shmem_global_exit(2);
    }
    const std::uint32_t rows = ny / static_cast<std::uint32_t>(npes), first = rows * static_cast<std::uint32_t>(me);
    const std::size_t band = std::size_t(rows + 2) * nx;
    const float alpha = 0.2f;

    // Two bands in the device heap; filled through the API, since a GPU's
    // device heap need not be addressable by the CPU.
    auto* bands = static_cast<float*>(shmem_malloc_with_hints(2 * band * sizeof(float), SHMEMX_MALLOC_DEVICE));
    if (!bands) shmem_global_exit(1);
    std::vector<float> init(band, 0.0f);
    for (std::uint32_t r = 0; r < rows + 2; ++r) {
        const long gy = long(first) + long(r) - 1;
        if (gy < 0 || gy >= long(ny)) continue;
        for (std::uint32_t x = 0; x < nx; ++x) init[std::size_t(r) * nx + x] = initial(x, std::uint32_t(gy), nx, ny);
    }
    shmem_putmem(bands, init.data(), band * sizeof(float), me);
    shmem_putmem(bands + band, init.data(), band * sizeof(float), me);
    shmem_barrier_all();

    vkshmemx_kernel* kernel = vkshmemx_kernel_create(heat2d_comp_spv, sizeof heat2d_comp_spv, sizeof(Push));
    if (!kernel) shmem_global_exit(1);
    Push push{vkshmemx_device_state(), 0, 0, nx, rows, first, ny, alpha};
    std::uint64_t addr[2] = {vkshmemx_device_address(bands), vkshmemx_device_address(bands + band)};
    const auto t0 = std::chrono::steady_clock::now();
    for (int s = 0; s < steps; ++s) {
        push.src = addr[s % 2];
        push.dst = addr[(s + 1) % 2];
        if (vkshmemx_dispatch(kernel, (nx + 15) / 16, (rows + 15) / 16, 1, &push, sizeof push) != 0)
            shmem_global_exit(1);
        shmem_barrier_all(); // every halo of this step has arrived before the next
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    // Gather the interior rows on PE 0.
    const float* result = bands + (steps % 2 ? band : 0);
    int status = 0;
    if (me == 0) {
        std::vector<float> grid(std::size_t(nx) * ny);
        for (int p = 0; p < npes; ++p)
            shmem_getmem(grid.data() + std::size_t(p) * rows * nx, result + nx, std::size_t(rows) * nx * sizeof(float),
                         p);
        const auto ref = reference(nx, ny, steps, alpha);
        double max_err = 0.0;
        for (std::size_t i = 0; i < grid.size(); ++i) max_err = std::max(max_err, double(std::fabs(grid[i] - ref[i])));
        // The device may fuse multiply-adds where the CPU does not: allow
        // rounding, nothing more (values are 0..100).
        const bool ok = max_err < 1e-3;
        std::printf("heat2d: %ux%u grid, %d PEs, %d steps, %.3f ms per step; max |device - reference| = %.2e: %s\n",
                    nx, ny, npes, steps, 1e3 * secs / steps, max_err, ok ? "OK" : "FAILED");
        if (!write_png(png, grid, nx, ny, 0.0f, 100.0f)) {
            std::fprintf(stderr, "heat2d: cannot write %s\n", png.c_str());
            status = 1;
        } else {
            std::printf("heat2d: wrote %s\n", png.c_str());
        }
        if (!ok) status = 1;
    }
    vkshmemx_kernel_destroy(kernel);
    shmem_free(bands);
    shmem_finalize();
    return status;
}
