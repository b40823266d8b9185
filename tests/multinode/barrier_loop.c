/* SPDX-License-Identifier: BSL-1.0 */
/* Puts to the next PE and barriers, `iterations` times (argv[1], default: until killed): a job
 * that is busy on every host when the multi-node test kills one host's PEs. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

static long box;

int main(int argc, char** argv) {
    long iterations = argc > 1 ? atol(argv[1]) : -1;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (me == 0) {
        printf("barrier_loop: %d PEs running\n", n);
        fflush(stdout);
    }
    for (long i = 0; iterations < 0 || i < iterations; ++i) {
        shmem_long_p(&box, i, (me + 1) % n);
        shmem_barrier_all();
        if (box != i) {
            fprintf(stderr, "barrier_loop: PE %d saw %ld, not %ld\n", me, box, i);
            shmem_global_exit(1);
        }
        shmem_barrier_all();
    }
    shmem_finalize();
    return 0;
}
