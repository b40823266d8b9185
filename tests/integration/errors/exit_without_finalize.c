/* SPDX-License-Identifier: BSL-1.0 */
/* The last PE leaves with exit(0) without shmem_finalize while the others wait in a barrier: the
 * job must end, non-zero, within seconds (not hang in the barrier forever). */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    int *x = shmem_malloc(sizeof(int));
    shmem_barrier_all();
    if (me == n - 1) {
        printf("PE %d: calling exit(0) now\n", me);
        fflush(stdout);
        exit(0);
    }
    shmem_int_p(x, me, (me + 1) % n);
    shmem_barrier_all(); /* never completes: PE n-1 is gone */
    printf("PE %d: the barrier returned although PE %d has exited\n", me, n - 1);
    shmem_finalize();
    return 0;
}
