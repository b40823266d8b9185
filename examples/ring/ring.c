/* SPDX-License-Identifier: BSL-1.0 */
/*
 * ring: the vkshmem demo. Every PE passes a block of data around a ring of PEs
 * through both symmetric heaps (host heap: shmem_malloc; device heap: Vulkan
 * DEVICE_LOCAL memory) and a global variable, counts arrivals with atomics on
 * PE 0, and checks every byte. Plain OpenSHMEM 1.5 C plus one vkshmem hint.
 *
 *   oshrun -np 4 ./ring
 */
#include <shmem.h>
#include <shmemx.h>

#include <stdio.h>
#include <stdlib.h>

#define N 4096

static long arrivals;     /* symmetric: a global variable */
static int ring_static[N]; /* symmetric too */

static int check(const int *buf, int from, int round, const char *where) {
    for (int i = 0; i < N; i++) {
        int want = from * 1000003 + round * 7919 + i;
        if (buf[i] != want) {
            fprintf(stderr, "PE %d: %s[%d] = %d, expected %d\n", shmem_my_pe(), where, i, buf[i], want);
            return 1;
        }
    }
    return 0;
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int next = (me + 1) % npes, prev = (me + npes - 1) % npes;

    int *host = shmem_malloc(N * sizeof(int));
    int *dev = shmem_malloc_with_hints(N * sizeof(int), SHMEMX_MALLOC_DEVICE);
    int *src = malloc(N * sizeof(int));
    if (!host || !dev || !src) {
        fprintf(stderr, "PE %d: allocation failed\n", me);
        shmem_global_exit(1);
    }

    int errors = 0;
    const int rounds = 10;
    for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < N; i++) src[i] = me * 1000003 + round * 7919 + i;
        shmem_int_put(host, src, N, next);
        shmem_int_put_nbi(dev, src, N, next);
        shmem_putmem(ring_static, src, sizeof(int) * N, next);
        shmem_quiet();
        shmem_long_atomic_inc(&arrivals, 0);
        shmem_barrier_all();
        errors += check(host, prev, round, "host heap");
        int *back = malloc(N * sizeof(int));
        shmem_int_get(back, dev, N, me); /* the device heap is read through the API */
        errors += check(back, prev, round, "device heap");
        free(back);
        errors += check(ring_static, prev, round, "static data");
        shmem_barrier_all();
    }

    long total = shmem_long_atomic_fetch(&arrivals, 0);
    int all_ok = 1;
    int *bad = shmem_calloc(1, sizeof(int));
    if (errors) shmem_int_atomic_add(bad, errors, 0);
    shmem_barrier_all();
    if (me == 0) {
        int bad_total = *bad;
        all_ok = bad_total == 0 && total == (long)rounds * npes;
        printf("ring: %d PEs, %d rounds of %zu bytes through the host heap, device heap and static data; "
               "%ld arrivals counted on PE 0 (expected %ld): %s\n",
               npes, rounds, sizeof(int) * N, total, (long)rounds * npes, all_ok ? "OK" : "FAILED");
    }
    shmem_free(bad);
    shmem_free(dev);
    shmem_free(host);
    free(src);
    shmem_finalize();
    return all_ok ? 0 : 1;
}
