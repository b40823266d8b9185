/* SPDX-License-Identifier: BSL-1.0 */
/* An OpenSHMEM 1.0 program: start_pes, the old header path, and no shmem_finalize. The library is
 * finalized when the program returns from main, collectively (the specification's start_pes):
 * the job must end with status 0. Every PE puts fresh words into the next PE's symmetric array
 * (poisoned first) and checks what it got; the PEs leave main at different times (PE 0 last),
 * and each one's last put goes out right before it returns, unwaited, which the implicit
 * finalize completes (its quiet and barrier) before the next PE looks at it after its own. */
#include <mpp/shmem.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define N 512

static uint64_t word(uint64_t key, int i) { return key * 0x9e3779b97f4a7c15ull + (uint64_t)i * 0xbf58476d1ce4e5b9ull; }

static uint64_t key_in; /* symmetric: static data */
static long last[2];    /* the last put's value, and whether it must be checked at exit */
static int me;

static void check_last_put(void) {
    /* After this PE's implicit finalize (handlers run in the reverse order of their registration,
     * and this one comes before start_pes's): the previous PE's last put has landed. */
    if (last[1] && last[0] != 4242) {
        fprintf(stderr, "implicit_finalize: PE %d: the last put before exit did not land (%ld)\n", me, last[0]);
        _exit(3);
    }
}

int main(void) {
    atexit(check_last_put);
    start_pes(0);
    me = _my_pe();
    const int n = _num_pes(), next = (me + 1) % n;
    uint64_t *dst = shmalloc(N * sizeof(uint64_t));
    if (!dst) return 2;
    for (int i = 0; i < N; ++i) dst[i] = 0xababababababababull;
    shmem_barrier_all();
    const uint64_t key = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20) ^ (uint64_t)me;
    uint64_t src[N];
    for (int i = 0; i < N; ++i) src[i] = word(key, i);
    shmem_uint64_p(&key_in, key, next);
    shmem_putmem(dst, src, sizeof src, next);
    shmem_barrier_all();
    int bad = 0;
    for (int i = 0; i < N; ++i) bad += dst[i] != word(key_in, i);
    if (bad) {
        fprintf(stderr, "implicit_finalize: PE %d: %d of %d words wrong\n", me, bad, N);
        return 1;
    }
    last[1] = 1;
    shmem_barrier_all(); /* every PE checks its last put at exit */
    shmem_long_p(&last[0], 4242, next);
    if (me == 0) usleep(200 * 1000); /* the others wait for PE 0 in their exit */
    printf("implicit_finalize: PE %d ok\n", me);
    return 0;
}
