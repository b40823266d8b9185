/* SPDX-License-Identifier: BSL-1.0 */
/* Erroneous call: an atomic on a misaligned long, one byte into a symmetric object. The last PE
 * makes the call; the job must end non-zero with "vkshmem error: shmem_long_atomic_add: ...". */
#include <shmem.h>
#include <stdio.h>

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    long *sym = shmem_malloc(4 * sizeof(long));
    shmem_barrier_all();
    if (me == n - 1) {
        shmem_long_atomic_add((long *)((char *)sym + 1), 1, (me + 1) % n);
        printf("PE %d: misaligned shmem_long_atomic_add returned\n", me);
    }
    shmem_barrier_all();
    shmem_free(sym);
    shmem_finalize();
    return 0;
}
