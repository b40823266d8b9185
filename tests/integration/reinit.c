/* SPDX-License-Identifier: BSL-1.0 */
/* shmem_query_initialized and repeated initialization (OpenSHMEM 1.6): init, work, finalize,
 * three times over, each round moving fresh data around the ring through a new heap. Prints
 * "reinit: N PEs OK" from PE 0. */
#include <shmem.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int fail(const char *what, int round) {
    fprintf(stderr, "reinit: round %d: %s\n", round, what);
    return 1;
}

int main(void) {
    int flag = -1;
    shmem_query_initialized(&flag);
    if (flag != 0) return fail("query_initialized before init is not 0", 0);
    unsigned seed = 0;
    static unsigned job_seed; /* symmetric: PE 0's draw, read by all (each PE's own clock may differ) */
    for (int round = 1; round <= 3; ++round) {
        if (round == 2) {
            int provided = -1;
            if (shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) != 0) return fail("shmem_init_thread", round);
        } else {
            shmem_init();
        }
        shmem_query_initialized(&flag);
        if (flag != 1) return fail("query_initialized after init is not 1", round);
        shmem_pcontrol(1);
        const int me = shmem_my_pe(), n = shmem_n_pes();
        if (round == 1) {
            if (me == 0) job_seed = (unsigned)time(NULL);
            shmem_barrier_all();
            seed = shmem_uint_g(&job_seed, 0);
        }
        long *box = shmem_malloc(sizeof(long) * 64);
        if (!box) return fail("shmem_malloc", round);
        long mine[64];
        for (int i = 0; i < 64; ++i) mine[i] = (long)(seed * 2654435761u) ^ ((long)round << 40) ^ ((long)me << 20) ^ i;
        shmem_long_put(box, mine, 64, (me + 1) % n);
        shmem_barrier_all();
        const int left = (me + n - 1) % n;
        for (int i = 0; i < 64; ++i)
            if (box[i] != ((long)(seed * 2654435761u) ^ ((long)round << 40) ^ ((long)left << 20) ^ i))
                return fail("data from the left neighbour is wrong", round);
        shmem_free(box);
        shmem_finalize();
        shmem_query_initialized(&flag);
        if (flag != 0) return fail("query_initialized after finalize is not 0", round);
    }
    shmem_init();
    if (shmem_my_pe() == 0) printf("reinit: %d PEs OK\n", shmem_n_pes());
    shmem_finalize();
    return 0;
}
