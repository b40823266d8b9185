/* SPDX-License-Identifier: BSL-1.0 */
/* Heap exhaustion is not fatal: with a 1 MiB heap, a 2 MiB request returns NULL on every PE, the
 * runtime says once which variable to raise, and the program goes on and exits 0.
 * argv[1]: "host" (shmem_malloc, SHMEM_SYMMETRIC_SIZE) or "device" (shmemx_device_malloc,
 * VKSHMEM_DEVICE_HEAP_SIZE). */
#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    const int device = argc > 1 && strcmp(argv[1], "device") == 0;
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    void *big = device ? shmemx_device_malloc(2u << 20) : shmem_malloc(2u << 20);
    if (big != NULL) {
        printf("PE %d: a 2 MiB %s allocation in a 1 MiB heap returned %p, not NULL\n", me, argv[1], big);
        fflush(stdout);
        shmem_global_exit(3);
    }
    /* The heap still works after the failure. */
    int *small = device ? shmemx_device_malloc(64 * sizeof(int)) : shmem_malloc(64 * sizeof(int));
    if (small == NULL) {
        printf("PE %d: a small allocation after the failed one returned NULL\n", me);
        fflush(stdout);
        shmem_global_exit(4);
    }
    small[0] = -1;
    shmem_barrier_all();
    shmem_int_p(small, me, (me + 1) % n);
    shmem_barrier_all();
    const int ok = small[0] == (me + n - 1) % n;
    shmem_free(small);
    shmem_finalize();
    return ok ? 0 : 5;
}
