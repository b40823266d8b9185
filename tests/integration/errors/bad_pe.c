/* SPDX-License-Identifier: BSL-1.0 */
/* Erroneous call: shmem_int_p to PE n_pes, which does not exist. The last PE makes the call while
 * the others wait in a barrier; with VKSHMEM_ERROR_CHECKS=1 the job must end non-zero with
 * "vkshmem error: shmem_int_p: ..." instead of writing somewhere or hanging. */
#include <shmem.h>
#include <stdio.h>

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    int *x = shmem_malloc(sizeof(int));
    shmem_barrier_all();
    if (me == n - 1) {
        shmem_int_p(x, 1, n);
        printf("PE %d: shmem_int_p to PE %d returned\n", me, n);
    }
    shmem_barrier_all();
    shmem_free(x);
    shmem_finalize();
    return 0;
}
