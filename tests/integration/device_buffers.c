/* SPDX-License-Identifier: BSL-1.0 */
/*
 * Local buffers inside this PE's own device heap: a put whose source, or a
 * get whose destination, is device-heap memory, to and from every space of
 * a peer. On a GPU shared by several PEs the CPU cannot touch that memory,
 * so the runtime must move it on the device (VKSHMEM_DEVICE_ROUTE=copy gives
 * the same rules on lavapipe). Random data, poisoned destinations, exact
 * checks; exits non-zero on the first wrong element.
 */
#include <shmem.h>
#include <shmemx.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 4099 /* odd, so copies are not multiples of a vector width */

static int fail(int me, const char *what, int i, int got, int want) {
    fprintf(stderr, "PE %d: %s[%d] = %d, expected %d\n", me, what, i, got, want);
    shmem_global_exit(1);
    return 1;
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    int *seeds = shmem_malloc(sizeof(int) * (size_t)n);
    int mine = (int)(time(NULL) ^ (me * 7919)) & 0xffff;
    for (int p = 0; p < n; p++) shmem_int_p(&seeds[me], mine, p);
    shmem_barrier_all();
    int prev_seed = seeds[prev];

    int *d_src = shmemx_device_malloc(N * sizeof(int));
    int *d_dst = shmemx_device_malloc(N * sizeof(int));
    int *d_tmp = shmemx_device_malloc(N * sizeof(int));
    int *h_dst = shmem_malloc(N * sizeof(int));
    int *priv = malloc(N * sizeof(int)), *back = malloc(N * sizeof(int));
    if (!d_src || !d_dst || !d_tmp || !h_dst || !priv || !back) return fail(me, "allocation", 0, 0, 1);

    srand((unsigned)mine);
    for (int i = 0; i < N; i++) priv[i] = rand();
    for (int i = 0; i < N; i++) back[i] = -1;
    shmem_int_put(d_src, priv, N, me);             /* private -> own device heap */
    shmem_int_put(d_dst, back, N, me);             /* poison */
    for (int i = 0; i < N; i++) h_dst[i] = -1;
    shmem_barrier_all();

    shmem_int_put(h_dst, d_src, N - 1, next);      /* own device heap -> peer host heap */
    shmem_int_put_nbi(d_dst, d_src, N - 1, next);  /* own device heap -> peer device heap */
    shmem_barrier_all();

    srand((unsigned)prev_seed);
    int *want = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) want[i] = rand();
    for (int i = 0; i < N - 1; i++)
        if (h_dst[i] != want[i]) return fail(me, "host heap from a device-heap source", i, h_dst[i], want[i]);
    if (h_dst[N - 1] != -1) return fail(me, "host heap past the end", N - 1, h_dst[N - 1], -1);
    shmem_int_get(back, d_dst, N, me);
    for (int i = 0; i < N - 1; i++)
        if (back[i] != want[i]) return fail(me, "device heap from a device-heap source", i, back[i], want[i]);
    if (back[N - 1] != -1) return fail(me, "device heap past the end", N - 1, back[N - 1], -1);

    shmem_int_get(d_tmp, h_dst, N - 1, next);      /* peer host heap -> own device heap */
    shmem_int_get(back, d_tmp, N - 1, me);
    for (int i = 0; i < N - 1; i++)
        if (back[i] != priv[i]) return fail(me, "device-heap destination of a get", i, back[i], priv[i]);
    shmem_int_get_nbi(d_tmp, d_dst, N - 1, next);  /* peer device heap -> own device heap */
    shmem_quiet();
    shmem_int_get(back, d_tmp, N - 1, me);
    for (int i = 0; i < N - 1; i++)
        if (back[i] != priv[i]) return fail(me, "device-heap destination of a device get", i, back[i], priv[i]);

    /* Large transfers between the host heap and a device heap: DMA copies
     * straight from and into the host heap (no staging). */
    const size_t big = 300007; /* bytes; odd on purpose */
    unsigned char *h_big = shmem_malloc(big), *d_big = shmemx_device_malloc(big), *h_back = shmem_malloc(big);
    if (!h_big || !d_big || !h_back) return fail(me, "allocation", 1, 0, 1);
    for (size_t i = 0; i < big; i++) h_big[i] = (unsigned char)(rand() >> 7);
    for (size_t i = 0; i < big; i++) h_back[i] = 0xa5;
    shmem_barrier_all();
    shmem_putmem(d_big, h_big, big, next);   /* host heap -> peer device heap */
    shmem_barrier_all();
    shmem_getmem(h_back, d_big, big - 1, me); /* own device heap -> host heap */
    unsigned char *prev_big = malloc(big);
    shmem_getmem(prev_big, h_big, big, prev);
    for (size_t i = 0; i + 1 < big; i++)
        if (h_back[i] != prev_big[i]) return fail(me, "large host-heap <-> device-heap copy", (int)i, h_back[i], prev_big[i]);
    if (h_back[big - 1] != 0xa5) return fail(me, "large copy past the end", (int)(big - 1), h_back[big - 1], 0xa5);
    free(prev_big);

    shmem_barrier_all();
    if (me == 0) printf("device_buffers: %d PEs OK\n", n);
    free(want);
    free(back);
    free(priv);
    shmem_finalize();
    return 0;
}
