// SPDX-License-Identifier: BSL-1.0
// The public headers in C++98, as older C++ programs and benchmarks include them: typed routines,
// the C++ overloads of the generic names and the team form of shmem_sync. Compiled only.
#include <shmem.h>
#include <shmemx.h>

int vkshmem_compile_cxx98(long* dst, const long* src, double* d) {
    shmem_long_put(dst, src, 1, 0);
    shmem_put(dst, src, 1, 0);
    shmem_atomic_add(dst, 1L, 0);
    shmem_sum_reduce(SHMEM_TEAM_WORLD, d, d, 1);
    shmem_sync(SHMEM_TEAM_WORLD);
    shmem_wait_until(dst, SHMEM_CMP_EQ, 1L);
    return shmem_my_pe();
}
