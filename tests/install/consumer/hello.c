/* SPDX-License-Identifier: BSL-1.0 */
/* A C program built against an installed vkshmem: every PE puts fresh random
 * words into the next PE's symmetric array (poisoned first), with a signal;
 * the next PE checks every word exactly. Prints "hello_c: PE n ok". */
#include <shmem.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N 1000

static uint64_t word(uint64_t key, int i) { return key * 0x9e3779b97f4a7c15ull + (uint64_t)i * 0xbf58476d1ce4e5b9ull; }

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    uint64_t *dst = shmem_malloc(N * sizeof(uint64_t));
    static uint64_t key_in, sig; /* symmetric: static data */
    memset(dst, 0xab, N * sizeof(uint64_t));
    shmem_barrier_all();

    const uint64_t key = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20) ^ (uint64_t)me;
    uint64_t src[N];
    for (int i = 0; i < N; ++i) src[i] = word(key, i);
    const int next = (me + 1) % n;
    shmem_uint64_p(&key_in, key, next);
    shmem_putmem_signal(dst, src, sizeof src, &sig, 1, SHMEM_SIGNAL_SET, next);
    shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, 1);
    shmem_barrier_all();
    int bad = 0;
    for (int i = 0; i < N; ++i) bad += dst[i] != word(key_in, i);
    if (bad) {
        fprintf(stderr, "hello_c: PE %d: %d of %d words wrong\n", me, bad, N);
        shmem_global_exit(1);
    }
    printf("hello_c: PE %d ok\n", me);
    shmem_free(dst);
    shmem_finalize();
    return 0;
}
