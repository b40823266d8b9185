/* SPDX-License-Identifier: BSL-1.0 */
/* The deprecated active-set collectives (OpenSHMEM 1.4 names, still in 1.6 programs): shmem_barrier,
 * shmem_sync,
 * shmem_broadcast32/64, collect32/64, fcollect32/64, alltoall32/64, alltoalls32/64 and the
 * shmem_TYPENAME_OP_to_all reductions, over the whole job and over the odd PEs (PE_start 1,
 * logPE_stride 1), with the same pSync arrays reused back to back. Checks every result exactly,
 * that the root's dest of a broadcast is left alone, and that pSync is back at SHMEM_SYNC_VALUE;
 * and broadcasts back to back alternating two pSync arrays, with no barrier between them.
 * Written in C11, as such programs are. Prints "active_set: N PEs OK" from PE 0. */
#include <shmem.h>

#include <complex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N_ELEMS 37
#define POISON 0x5a5a5a5a5a5a5a5aull

static long pSync[SHMEM_BCAST_SYNC_SIZE];
static long pSync2[SHMEM_REDUCE_SYNC_SIZE];
static int me, npes;
static uint64_t seed;

static void fail(const char *what, int detail) {
    fprintf(stderr, "active_set: PE %d: %s (%d)\n", me, what, detail);
    exit(1); /* ends the job: the runtime sees a PE leave without shmem_finalize */
}

static uint64_t value(uint64_t key, int pe, int i) {
    uint64_t x = seed ^ (key << 32) ^ ((uint64_t)pe << 16) ^ (uint64_t)i;
    x = (x ^ (x >> 31)) * 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 29);
}

static void check_psync(long *p, int n) {
    for (int i = 0; i < n; ++i)
        if (p[i] != SHMEM_SYNC_VALUE) fail("pSync is not back at SHMEM_SYNC_VALUE", i);
}

/* Runs every collective on the active set (start, log, size), for a PE in it (index `idx`). */
static void on_set(int start, int log, int size, int idx, uint64_t *src, uint64_t *dst, int round) {
    const int stride = 1 << log;
    /* barrier: a put to the next PE of the set before it, read after it. */
    dst[0] = POISON;
    shmem_barrier(start, log, size, pSync);
    shmem_uint64_p(dst, value(1, me, round), start + ((idx + 1) % size) * stride);
    shmem_barrier(start, log, size, pSync);
    if (dst[0] != value(1, start + ((idx + size - 1) % size) * stride, round)) fail("shmem_barrier", round);
    /* sync: the same with the put completed by hand. */
    shmem_uint64_p(dst + 1, value(11, me, round), start + ((idx + 1) % size) * stride);
    shmem_quiet();
    shmem_sync(start, log, size, pSync);
    if (dst[1] != value(11, start + ((idx + size - 1) % size) * stride, round)) fail("shmem_sync", round);
    shmem_sync(start, log, size, pSync); /* nobody overwrites dst before all have read it */

    for (int root = 0; root < size; ++root) {
        for (int i = 0; i < N_ELEMS; ++i) src[i] = value(2 + (uint64_t)root, me, i), dst[i] = POISON;
        shmem_barrier(start, log, size, pSync2);
        shmem_broadcast64(dst, src, N_ELEMS, root, start, log, size, pSync);
        for (int i = 0; i < N_ELEMS; ++i) {
            const uint64_t want = idx == root ? POISON : value(2 + (uint64_t)root, start + root * stride, i);
            if (dst[i] != want) fail("shmem_broadcast64", i);
        }
        /* 32-bit broadcast of an odd count. */
        uint32_t *s32 = (uint32_t *)src, *d32 = (uint32_t *)dst;
        for (int i = 0; i < N_ELEMS; ++i) s32[i] = (uint32_t)value(3, me, i), d32[i] = 0xdeadbeef;
        shmem_barrier(start, log, size, pSync2);
        shmem_broadcast32(d32, s32, N_ELEMS, root, start, log, size, pSync);
        for (int i = 0; i < N_ELEMS; ++i)
            if (idx != root && d32[i] != (uint32_t)value(3, start + root * stride, i)) fail("shmem_broadcast32", i);
    }

    /* fcollect64, collect64 (member k contributes k + 1 elements), alltoall64, alltoalls64. */
    for (int i = 0; i < N_ELEMS; ++i) src[i] = value(4, me, i);
    for (int i = 0; i < N_ELEMS * 4; ++i) dst[i] = POISON;
    shmem_barrier(start, log, size, pSync2);
    shmem_fcollect64(dst, src, 5, start, log, size, pSync);
    for (int k = 0; k < size; ++k)
        for (int i = 0; i < 5; ++i)
            if (dst[k * 5 + i] != value(4, start + k * stride, i)) fail("shmem_fcollect64", k * 5 + i);
    shmem_barrier(start, log, size, pSync2);
    shmem_collect64(dst, src, (size_t)idx + 1, start, log, size, pSync);
    for (int k = 0, at = 0; k < size; at += ++k)
        for (int i = 0; i <= k; ++i)
            if (dst[at + i] != value(4, start + k * stride, i)) fail("shmem_collect64", at + i);
    shmem_barrier(start, log, size, pSync2);
    shmem_alltoall64(dst, src, 2, start, log, size, pSync);
    for (int k = 0; k < size; ++k)
        for (int i = 0; i < 2; ++i)
            if (dst[k * 2 + i] != value(4, start + k * stride, idx * 2 + i)) fail("shmem_alltoall64", k * 2 + i);
    for (int i = 0; i < N_ELEMS * 4; ++i) dst[i] = POISON;
    shmem_barrier(start, log, size, pSync2);
    shmem_alltoalls64(dst, src, 3, 2, 2, start, log, size, pSync); /* dst stride 3, sst 2, 2 per PE */
    for (int k = 0; k < size; ++k)
        for (int i = 0; i < 2; ++i) {
            if (dst[3 * (k * 2 + i)] != value(4, start + k * stride, 2 * (idx * 2 + i))) fail("shmem_alltoalls64", i);
            if (dst[3 * (k * 2 + i) + 1] != POISON) fail("shmem_alltoalls64 wrote between strides", i);
        }

    /* Reductions: sums wrap; floating values are small integers, so any order is exact. */
    static int isrc[N_ELEMS], idst[N_ELEMS], iwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + N_ELEMS];
    static long lsrc[N_ELEMS], ldst[N_ELEMS], lwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + N_ELEMS];
    static short hsrc[N_ELEMS], hdst[N_ELEMS], hwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + N_ELEMS];
    static double dsrc[N_ELEMS], ddst[N_ELEMS], dwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + N_ELEMS];
    static double complex csrc[N_ELEMS], cdst[N_ELEMS], cwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + N_ELEMS];
    for (int i = 0; i < N_ELEMS; ++i) {
        isrc[i] = (int)value(5, me, i);
        lsrc[i] = (long)value(6, me, i);
        hsrc[i] = (short)value(7, me, i);
        dsrc[i] = (double)((int)(value(8, me, i) % 9) - 4);
        csrc[i] = (double)((int)(value(9, me, i) % 5) - 2) + (double)((int)(value(10, me, i) % 5) - 2) * I;
    }
    shmem_barrier(start, log, size, pSync2);
    shmem_int_sum_to_all(idst, isrc, N_ELEMS, start, log, size, iwrk, pSync2);
    shmem_long_max_to_all(ldst, lsrc, N_ELEMS, start, log, size, lwrk, pSync);
    shmem_short_xor_to_all(hdst, hsrc, N_ELEMS, start, log, size, hwrk, pSync2);
    shmem_double_prod_to_all(ddst, dsrc, N_ELEMS, start, log, size, dwrk, pSync);
    shmem_complexd_sum_to_all(cdst, csrc, N_ELEMS, start, log, size, cwrk, pSync2);
    for (int i = 0; i < N_ELEMS; ++i) {
        unsigned isum = 0;
        long lmax = (long)value(6, start, i);
        short hxor = 0;
        double dprod = 1;
        double complex csum = 0;
        for (int k = 0; k < size; ++k) {
            const int pe = start + k * stride;
            isum += (unsigned)(int)value(5, pe, i);
            if ((long)value(6, pe, i) > lmax) lmax = (long)value(6, pe, i);
            hxor = (short)(hxor ^ (short)value(7, pe, i));
            dprod *= (double)((int)(value(8, pe, i) % 9) - 4);
            csum += (double)((int)(value(9, pe, i) % 5) - 2) + (double)((int)(value(10, pe, i) % 5) - 2) * I;
        }
        if (idst[i] != (int)isum) fail("shmem_int_sum_to_all", i);
        if (ldst[i] != lmax) fail("shmem_long_max_to_all", i);
        if (hdst[i] != hxor) fail("shmem_short_xor_to_all", i);
        if (ddst[i] != dprod) fail("shmem_double_prod_to_all", i);
        if (cdst[i] != csum) fail("shmem_complexd_sum_to_all", i);
    }
    shmem_barrier(start, log, size, pSync2);
}

/* Broadcasts back to back with no barrier between them, alternating two pSync arrays and two
 * halves of dst, each PE refilling the half it has just checked (an idiom of older programs and
 * of public suites): a root may run a call ahead, but must not write into a half before its PE
 * has refilled it. */
static void alternating_broadcasts(uint64_t *src, uint64_t *dst, int round) {
    long *ps[2] = {pSync, pSync2};
    const int root = round % npes;
    for (int i = 0; i < 2 * N_ELEMS; ++i) dst[i] = POISON;
    shmem_barrier_all();
    for (int it = 0; it < 300; ++it) {
        uint64_t *half = dst + (it % 2) * N_ELEMS, *from = src + (it % 2) * N_ELEMS;
        for (int i = 0; i < N_ELEMS; ++i) from[i] = value(100 + (uint64_t)it, me, i);
        shmem_broadcast64(half, from, N_ELEMS, root, 0, 0, npes, ps[it % 2]);
        for (int i = 0; i < N_ELEMS; ++i) {
            if (me != root && half[i] != value(100 + (uint64_t)it, root, i))
                fail("shmem_broadcast64 back to back, alternating pSync", it);
            if (me == root && half[i] != POISON) fail("shmem_broadcast64 wrote the root's dest", it);
            half[i] = POISON;
        }
    }
    shmem_barrier_all();
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; ++i) pSync[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; ++i) pSync2[i] = SHMEM_SYNC_VALUE;
    seed = (uint64_t)time(NULL);
    shmem_barrier_all(); /* every pSync is initialized before any PE uses one */
    shmem_broadcast64(&seed, &seed, 1, 0, 0, 0, npes, pSync); /* the same data on every PE */
    shmem_barrier_all();
    uint64_t *src = shmem_malloc(sizeof(uint64_t) * N_ELEMS * 4);
    uint64_t *dst = shmem_malloc(sizeof(uint64_t) * N_ELEMS * 4);
    if (!src || !dst) fail("shmem_malloc", 0);
    for (int round = 0; round < 3; ++round) {
        on_set(0, 0, npes, me, src, dst, round);
        shmem_barrier_all();
        alternating_broadcasts(src, dst, round);
        if (npes >= 2 && me % 2 == 1) on_set(1, 1, npes / 2, me / 2, src, dst, round);
        shmem_barrier_all();
        check_psync(pSync, SHMEM_BCAST_SYNC_SIZE);
        check_psync(pSync2, SHMEM_REDUCE_SYNC_SIZE);
        shmem_barrier_all(); /* no PE signals into pSync of the next round before all have checked */
    }
    shmem_free(dst);
    shmem_free(src);
    if (me == 0) printf("active_set: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
