/* SPDX-License-Identifier: BSL-1.0 */
/* Erroneous call: a stack variable as the destination of shmem_int_put. The last PE makes the
 * call; the job must end non-zero with "vkshmem error: shmem_int_put: ...". */
#include <shmem.h>
#include <stdio.h>

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    int on_stack = 0;
    const int src = 7;
    shmem_barrier_all();
    if (me == n - 1) {
        shmem_int_put(&on_stack, &src, 1, (me + 1) % n);
        printf("PE %d: shmem_int_put to a stack address returned\n", me);
    }
    shmem_barrier_all();
    shmem_finalize();
    return on_stack == 12345; /* keeps on_stack alive */
}
